"""RayVectorEnv on a 2-node Ray cluster on this machine: agents on both nodes, and a node lost."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from tests.vector.envs import CountdownEnv
from vecspaces.error import WorkerDiedError

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[Any]:
    """A head node and a second node of one CPU each; this process is the driver. Runs after the other Ray tests."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    import ray
    from ray.cluster_utils import Cluster

    ray.shutdown()  # the run's shared local Ray, if it was started: its tests are done (see conftest.py)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def make(cluster: Any, **kwargs: Any) -> Any:
    from vecspaces.vector.ray import RayVectorEnv

    fns = [functools.partial(CountdownEnv, 100, label) for label in range(4)]
    return RayVectorEnv(fns, workers_per_agent=1, context="fork", timeout=30, **kwargs)


def second_node(cluster: Any) -> Any:
    return next(node for node in cluster.list_all_nodes() if node is not cluster.head_node)


def agent_on(envs: Any, node: Any) -> Any:
    return next(agent for agent in envs._crew.agents if agent.description.node_id == node.node_id)


def test_agents_spread_over_both_nodes_and_step_as_one_batch(two_nodes: Any) -> None:
    with make(two_nodes) as envs:  # one agent per node by default
        nodes = {w["node_id"] for w in envs.worker_info()}
        assert nodes == {node.node_id for node in two_nodes.list_all_nodes()}
        envs.reset(seed=0)
        obs, rewards, *_, infos = envs.step(np.arange(4))
        assert obs[:, 0].tolist() == [1, 1, 1, 1] and rewards.tolist() == [0, 1, 2, 3]
        assert infos["label"].tolist() == [0, 1, 2, 3]


def test_a_lost_node_is_a_worker_died_error_then_a_restart_elsewhere(two_nodes: Any) -> None:
    with make(two_nodes, restart_agents=True) as envs:
        envs.reset(seed=0)
        envs.step(np.ones(4, dtype=np.int64))
        lost = agent_on(envs, second_node(two_nodes))
        two_nodes.remove_node(second_node(two_nodes))
        obs, _, _, truncations, infos = envs.step(np.ones(4, dtype=np.int64))
        assert envs.restarts == 1
        restarted = [i in lost.envs for i in range(4)]
        assert truncations.tolist() == restarted and infos["_worker_restarted"].tolist() == restarted
        assert obs[:, 0].tolist() == [0 if r else 2 for r in restarted]
        assert {w["node_id"] for w in envs.worker_info()} == {two_nodes.head_node.node_id}
    two_nodes.add_node(num_cpus=1)
    two_nodes.wait_for_nodes()
    with make(two_nodes) as envs:
        envs.reset(seed=0)
        lost = agent_on(envs, second_node(two_nodes))
        two_nodes.remove_node(second_node(two_nodes))
        with pytest.raises(WorkerDiedError, match=f"agent {lost.index}, node .* died during step"):
            envs.step(np.ones(4, dtype=np.int64))


def test_the_cluster_example_spreads_its_envs_over_two_nodes() -> None:
    from tests.test_examples import run_example

    result = run_example("ray_cluster.py")  # a subprocess starting its own 2-node cluster
    assert result.returncode == 0, result.stderr
    nodes = [line for line in result.stdout.splitlines() if line.startswith("node ")]
    assert len(nodes) == 2 and "env-steps/s" in result.stdout
    assert "envs [0, 1, 2, 3]" in nodes[0] + nodes[1] and "envs [4, 5, 6, 7]" in nodes[0] + nodes[1]
