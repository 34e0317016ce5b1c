"""Envs spread over the nodes of a Ray cluster: RayVectorEnv with ``placement="spread"``.

Without an address this starts a local two-node Ray cluster in this process (a head node and one more, 1 CPU
each, as two machines would be), so that the agents land on both nodes, and shuts it down at the end. With an
address (the first argument, or the RAY_ADDRESS environment variable) it uses that cluster instead::

    python examples/ray_cluster.py                      # a local 2-node cluster
    python examples/ray_cluster.py 10.0.0.5:6379        # an existing cluster (or: RAY_ADDRESS=... python ...)

It steps 8 TinyEnvs a few hundred times with random actions, then prints the steps per second and which node ran
which envs. It needs Ray: ``pip install "vecspaces[ray]"``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import ray
from ray.cluster_utils import Cluster

from vecspaces.envs import TinyEnv
from vecspaces.vector.ray import RayVectorEnv

NUM_ENVS = 8
NUM_STEPS = 300


def given_address() -> str | None:
    """The address given as the first argument, else in RAY_ADDRESS; None if neither."""
    # Run by runpy (as tests/test_examples.py does), the script's own path can be left among the arguments.
    arguments = [argument for argument in sys.argv[1:] if argument != sys.argv[0]]
    return arguments[0] if arguments else os.environ.get("RAY_ADDRESS") or None


@contextlib.contextmanager
def connected(address: str | None) -> Iterator[None]:
    """Connected to the cluster at ``address``, or to a local two-node cluster started (and ended) here."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    cluster = None
    if not address:
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        address = cluster.address
    try:
        # Ray's own notes (cluster started, connected, its workers' logs) would bury the example's output.
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
        yield
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()


def show_nodes(workers: list[dict[str, Any]]) -> None:
    """The envs, agents and worker processes of each node."""
    by_node: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for worker in workers:
        by_node[worker["node_id"]].append(worker)
    for node, on_node in by_node.items():
        envs = sorted(i for worker in on_node for i in worker["envs"])
        agents = sorted({worker["agent"] for worker in on_node})
        pids = [worker["pid"] for worker in on_node]
        print(f"node {node[:12]} ({on_node[0]['address']}): agents {agents}, envs {envs}, worker pids {pids}")


def main() -> None:
    with connected(given_address()):
        print(f"{len(ray.nodes())} Ray nodes, {ray.cluster_resources().get('CPU', 0):g} CPUs")
        envs = RayVectorEnv([TinyEnv] * NUM_ENVS, placement="spread")
        with envs:
            envs.reset(seed=0)
            envs.action_space.seed(0)
            start = time.perf_counter()
            for _ in range(NUM_STEPS):
                envs.step(envs.action_space.sample())
            seconds = time.perf_counter() - start
            print(f"{NUM_STEPS} steps of {NUM_ENVS} envs: {NUM_STEPS * NUM_ENVS / seconds:,.0f} env-steps/s")
            show_nodes(envs.worker_info())


if __name__ == "__main__":
    main()
