"""How many agents, which envs each runs, and where Ray places them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.vector._async.options import split_envs

__all__ = ["AgentPlan", "plan_agents", "replacement_options"]

_PLACEMENTS = ("spread", "pack")


@dataclass
class AgentPlan:
    """One agent to start.

    Attributes:
        envs: the envs it runs (contiguous).
        options: its Ray actor options (resources and scheduling strategy).
        workers: its local pool's ``num_workers`` (None: the node's physical cores, at most its envs).
    """

    envs: range
    options: dict[str, Any]
    workers: int | None


def plan_agents(
    ray: Any,
    num_envs: int,
    num_agents: int | None,
    envs_per_agent: int | None,
    workers_per_agent: int | None,
    cpus_per_agent: float | None,
    placement: Any,
) -> list[AgentPlan]:
    """Decide the agents of a vector env of ``num_envs`` envs (see ``RayVectorEnv`` for the arguments).

    Raises:
        InvalidValueError: an argument is out of range, or ``placement`` names no placement.
        InvalidTypeError: an argument has the wrong type.
    """
    for name, value in (("num_agents", num_agents), ("envs_per_agent", envs_per_agent)):
        _check_count(name, value, num_envs)
    _check_count("workers_per_agent", workers_per_agent, None, least=0)
    if cpus_per_agent is not None and (
        isinstance(cpus_per_agent, bool) or not isinstance(cpus_per_agent, (int, float)) or not cpus_per_agent > 0
    ):
        raise InvalidValueError(message("cpus_per_agent is invalid", expected="a number > 0", got=show(cpus_per_agent)))
    if num_agents is not None and envs_per_agent is not None:
        raise InvalidValueError(
            message(
                "num_agents and envs_per_agent are both given",
                expected="at most one of them",
                got=f"num_agents={num_agents}, envs_per_agent={envs_per_agent}",
            )
        )
    nodes = _nodes_with_cpus(ray)
    if num_agents is None:
        if envs_per_agent is not None:
            num_agents = math.ceil(num_envs / envs_per_agent)
        elif cpus_per_agent is not None:
            num_agents = max(1, sum(int(node["Resources"]["CPU"] // cpus_per_agent) for node in nodes))
        else:
            num_agents = len(nodes)
    num_agents = min(num_agents, num_envs)
    strategies = _strategies(ray, placement, nodes, num_agents)
    workers: list[int | None]
    if workers_per_agent is not None:
        workers = [workers_per_agent] * num_agents
    elif cpus_per_agent is not None:
        workers = [max(1, int(cpus_per_agent))] * num_agents
    else:
        workers = _share_of_node_cpus(strategies, nodes)
    return [
        AgentPlan(envs, {"num_cpus": cpus_per_agent or 0, "scheduling_strategy": strategy}, count)
        for envs, strategy, count in zip(split_envs(num_envs, num_agents), strategies, workers, strict=True)
    ]


def _share_of_node_cpus(strategies: list[Any], nodes: list[dict[str, Any]]) -> list[int | None]:
    """Per agent, its node's CPUs shared among the node's agents (None where Ray decides the node).

    A share of one CPU (or less) is 0 workers: the agent steps its envs itself, since a worker would add a
    process hop to every step and no parallelism (2 agents of 4 envs on 2 CPUs here: tiny 23.0k env-steps/s
    against 19.8k with a worker each, cpu 1,699 against 1,599).
    """
    node_of = [getattr(strategy, "node_id", None) for strategy in strategies]
    cpus = {node["NodeID"]: int(node["Resources"].get("CPU", 1)) for node in nodes}
    shares = [None if node is None or node not in cpus else cpus[node] // node_of.count(node) for node in node_of]
    return [None if share is None else share if share > 1 else 0 for share in shares]


def _check_count(name: str, value: Any, most: int | None, least: int = 1) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(message(f"{name} is invalid", expected="an int or None", got=show(value)))
    if value < least or (most is not None and value > most):
        bound = f"an int in [{least}, {most}] (the number of envs)" if most is not None else f"an int >= {least}"
        raise InvalidValueError(message(f"{name} is invalid", expected=bound, got=show(value)))


def _nodes_with_cpus(ray: Any) -> list[dict[str, Any]]:
    nodes = [node for node in ray.nodes() if node["Alive"] and node["Resources"].get("CPU", 0) > 0]
    return nodes or [node for node in ray.nodes() if node["Alive"]]


def _strategies(ray: Any, placement: Any, nodes: list[dict[str, Any]], num_agents: int) -> list[Any]:
    """Agent k's scheduling strategy, for each k."""
    from ray.util.placement_group import PlacementGroup
    from ray.util.scheduling_strategies import (
        NodeAffinitySchedulingStrategy,
        PlacementGroupSchedulingStrategy,
    )

    if isinstance(placement, PlacementGroup):
        bundles = placement.bundle_count
        return [
            PlacementGroupSchedulingStrategy(placement, placement_group_bundle_index=k % bundles)
            for k in range(num_agents)
        ]
    if isinstance(placement, str) and placement in _PLACEMENTS:
        if placement == "pack":
            node_ids = [ray.get_runtime_context().get_node_id()]
        else:
            node_ids = [node["NodeID"] for node in nodes]
    elif isinstance(placement, (list, tuple)) and placement and all(isinstance(n, str) for n in placement):
        alive = {node["NodeID"] for node in ray.nodes() if node["Alive"]}
        unknown = [n for n in placement if n not in alive]
        if unknown:
            problem = "placement names nodes that are not alive"
            raise InvalidValueError(message(problem, expected="ids of alive Ray nodes", got=show(unknown)))
        node_ids = list(placement)
    else:
        raise InvalidValueError(
            message(
                "placement is invalid",
                expected="'spread', 'pack', a list of Ray node ids or a PlacementGroup",
                got=show(placement),
            )
        )
    # Hard: a soft affinity lets Ray place an agent elsewhere while a node that just joined is still settling.
    return [NodeAffinitySchedulingStrategy(node_ids[k % len(node_ids)], soft=False) for k in range(num_agents)]


def replacement_options(options: dict[str, Any]) -> dict[str, Any]:
    """A dead agent's replacement goes to its node if that is alive, else wherever Ray finds room."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    strategy = options["scheduling_strategy"]
    if isinstance(strategy, NodeAffinitySchedulingStrategy):
        strategy = NodeAffinitySchedulingStrategy(strategy.node_id, soft=True)
    return {**options, "scheduling_strategy": strategy}
