"""RayVectorEnv: the envs of one vector env spread over Ray agents, each running a local pool.

See the package docstring for the data flow and the failure semantics.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces.error import InvalidValueError, NoAsyncCallError, message, show
from vecspaces.vector._arguments import (
    as_action_batch,
    env_factories,
    seeds_per_env,
    split_action_batch,
    split_reset_mask,
)
from vecspaces.vector._async import interrupts, options
from vecspaces.vector._async.gate import CallGate
from vecspaces.vector._async.observations import take_envs
from vecspaces.vector._async.protocol import add_note, rebuild_error
from vecspaces.vector._gymnasium_facing import Face, face_of_arguments
from vecspaces.vector._spaces import (
    ObservationMode,
    as_vecspaces_observation_mode,
    check_observation_mode,
    resolve_env_spaces,
)
from vecspaces.vector.ray.batches import Rows, assign, join, join_infos
from vecspaces.vector.ray.calls import AgentCalls
from vecspaces.vector.ray.crew import DEFERRAL, AgentHandle, Crew
from vecspaces.vector.ray.placement import plan_agents
from vecspaces.vector.ray.pool_mode import PoolMode
from vecspaces.vector.ray.protocol import AgentCommand, Answer, PlainStep
from vecspaces.vector.ray.restarts import OwedRows
from vecspaces.vector.vector_env import AutoresetMode, SubEnvsVectorEnv, autoreset_mode_of

__all__ = ["RayVectorEnv"]

StepResult = tuple[Any, npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]
RecvResult = tuple[Any, npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any], Any]

_TRANSPORTS = ("socket", "ray")
_RESERVED_CALLS = ("reset", "step", "close")


class RayVectorEnv(SubEnvsVectorEnv[Any, Any, npt.NDArray[np.float64]]):
    """Run sub-environments on a Ray cluster: agent actors each step a slice of them in a local worker pool.

    Same API, results and errors as :class:`~vecspaces.vector.AsyncVectorEnv` (a dead agent is a
    :class:`~vecspaces.error.WorkerDiedError`), with the envs spread over the cluster's nodes.

    Args:
        env_fns: callables that each create one sub-environment (sent to the agents with cloudpickle).
        num_agents: how many agents; default: one per alive node with CPUs (or per ``cpus_per_agent`` block).
        envs_per_agent: instead of ``num_agents``, how many envs each agent runs (at most).
        workers_per_agent: worker processes of each agent's local pool. By default each agent steps one CPU's
            share of its envs itself and runs a worker for each other CPU it has (``cpus_per_agent``, else the
            node's CPUs shared among its agents), so with one CPU it steps them all; the envs it steps skip a
            process hop, but one that crashes its process takes the agent with it (a ``WorkerDiedError``, or a
            restart with ``restart_agents``). Given, the agent steps no env itself (0: every env).
        cpus_per_agent: CPUs each agent reserves from Ray (default: none reserved, one agent per node).
        placement: ``"spread"`` (agents round-robin over the nodes), ``"pack"`` (on the driver's node), a list
            of Ray node ids (agent k on the k-th, round-robin) or a Ray ``PlacementGroup`` (agent k in bundle k).
        transport: ``"socket"``: each step travels over a direct socket per agent, opened with a random
            authkey; ``"ray"``: each step is a Ray actor call (slower; for clusters where the driver cannot
            reach the agents' nodes directly).
        batch_size: how many envs :meth:`recv` returns in pool mode (default: all of them).
        timeout: the default timeout in seconds of every wait (None waits as long as the agents live).
        startup_timeout: how long the agents may take to start and build their envs, in seconds.
        restart_agents: replace a dead agent (its envs come back reset, reported as truncated with
            ``info["worker_restarted"]``) instead of breaking the vector env. The agents' local pools also
            restart their dead workers.
        autoreset_mode: an :class:`~vecspaces.vector.AutoresetMode` or its string value.
        observation_mode: ``"same"``, ``"different"`` or a ``(batched, single)`` pair of spaces.
        copy: if True, ``reset`` and ``step`` return observations the next call will not overwrite; if False
            they return one buffer, overwritten by the next ``reset`` or ``step``.
        ray_address: the cluster to connect to when Ray is not initialised yet (None: start a local one, closed
            again by :meth:`close`).
        context: the start method of the agents' local pools. Forkserver by default: a Ray worker runs threads,
            which ``fork`` copies in an unknown state; ``"fork"`` starts an agent's pool 0.7 s sooner here.

    Example:
        >>> from vecspaces.envs import TinyEnv
        >>> with RayVectorEnv([TinyEnv] * 4, num_agents=2, workers_per_agent=1) as envs:  # doctest: +SKIP
        ...     obs, infos = envs.reset(seed=0)
        ...     obs, rewards, terminations, truncations, infos = envs.step(np.array([0, 1, 0, 1]))
        >>> obs.shape  # doctest: +SKIP
        (4, 4)
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], Any]],
        *,
        num_agents: int | None = None,
        envs_per_agent: int | None = None,
        workers_per_agent: int | None = None,
        cpus_per_agent: float | None = None,
        placement: Any = "spread",
        transport: str = "socket",
        batch_size: int | None = None,
        timeout: float | None = None,
        startup_timeout: float = 120.0,
        restart_agents: bool = False,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        observation_mode: ObservationMode = "same",
        copy: bool = True,
        ray_address: str | None = None,
        context: str = "forkserver",
    ) -> None:
        self.closed = True  # until the agents are up, there is nothing for close() to do
        self.env_fns = env_factories(env_fns)
        if transport not in _TRANSPORTS:
            raise InvalidValueError(message("transport is invalid", expected="'socket' or 'ray'", got=show(transport)))
        self.num_envs = len(self.env_fns)
        self.copy = copy
        self.transport = transport
        self.timeout = None if timeout is None else options.seconds("timeout", timeout)
        startup_timeout = options.seconds("startup_timeout", startup_timeout)
        self.restart_agents = restart_agents
        self.observation_mode = observation_mode
        self.autoreset_mode = autoreset_mode_of(autoreset_mode)
        arguments_face = face_of_arguments(autoreset_mode, observation_mode)
        observation_mode = as_vecspaces_observation_mode(observation_mode)
        check_observation_mode(observation_mode)
        self.batch_size = options.pool_batch_size(batch_size, self.num_envs)
        options.start_context(context)  # checked here, before any agent is started to find it wrong

        ray = _import_ray()
        self._started_ray = not ray.is_initialized()
        if self._started_ray:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(address=ray_address, include_dashboard=False, log_to_driver=True)
        interrupts.watch()
        try:
            plans = plan_agents(
                ray, self.num_envs, num_agents, envs_per_agent, workers_per_agent, cpus_per_agent, placement
            )
            pool_options = {
                "context": context,
                "copy": False,  # the agent sends the batch on at once
                "autoreset_mode": self.autoreset_mode,
                "observation_mode": "different" if isinstance(observation_mode, tuple) else observation_mode,
                "restart_workers": restart_agents,
                "startup_timeout": startup_timeout,
            }
            self._crew = Crew(ray, self.env_fns, plans, pool_options, transport, startup_timeout, restart_agents)
            self._crew.deliver = self._deliver
            self._crew.restarted = lambda agent, answer: self._owed.owe(agent.envs, answer.result)
            self._reset_state()
            self.closed = False
            self._crew.start(self._crew.agents)
            self._describe(observation_mode, arguments_face)
            self._crew.plain_step = self._plain_step
            self._crew.connect(self._crew.agents)
            if restart_agents:
                self._crew.keep_standbys()
        except BaseException:
            # Whatever started: agents, the signal wrappers, Ray itself if this started it.
            self.closed = True
            self.close_extras(terminate=True)
            raise

    def _reset_state(self) -> None:
        self._calls = AgentCalls(self._crew)  # the Gymnasium-style call in progress
        self._gate = CallGate(self._calls, self._crew, "RayVectorEnv")  # which call may start
        self._reset_envs: list[int] = []
        self._owed: OwedRows  # set with the spaces (see _describe), before any call
        self._pool_mode: PoolMode  # likewise
        self._buffer: Any = None  # copy=False: the batch every reset and step writes

    def _describe(self, observation_mode: ObservationMode, arguments_face: Face) -> None:
        descriptions = [agent.description for agent in self._crew.agents]
        first = descriptions[0]
        assert first is not None
        self.metadata = {**first.metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = first.render_mode
        spaces = resolve_env_spaces(
            observation_mode,
            [space for d in descriptions if d is not None for space in d.observation_spaces],
            [space for d in descriptions if d is not None for space in d.action_spaces],
        )
        self._spaces = spaces
        self._show_spaces(spaces, arguments_face | first.face)
        self._owed = OwedRows(spaces.single_observation_space, autoreset_mode_of(self.autoreset_mode))
        self._pool_mode = PoolMode(self._crew, self._owed, self.num_envs, self.batch_size)
        self._gate.pool_mode = self._pool_mode

    def _plain_step(self, agent: AgentHandle) -> PlainStep | None:
        return PlainStep.of(self._spaces.single_observation_space, self._spaces.single_action_space, len(agent.envs))

    # -- Gymnasium's API -----------------------------------------------------------------------------------

    @property
    def restarts(self) -> int:
        """How many times a dead agent was replaced."""
        return self._crew.restarts

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env, or those selected by ``options["reset_mask"]``; see :meth:`reset_async`."""
        self.reset_async(seed=seed, options=options)
        return self.reset_wait()

    def reset_async(self, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None) -> None:
        """Send the reset command to the agents (arguments as for ``AsyncVectorEnv.reset_async``)."""
        self._gate.check_can_start("reset_async", self.timeout)
        seeds = seeds_per_env(seed, self.num_envs)
        mask, options = split_reset_mask(options, self.num_envs)
        self._reset_envs = list(range(self.num_envs)) if mask is None else np.flatnonzero(mask).tolist()
        with DEFERRAL:
            self._calls.start(AgentCommand.RESET)
            for agent in self._crew.agents:
                local = dict(options or {})
                if mask is not None:
                    local["reset_mask"] = mask[agent.envs.start : agent.envs.stop]
                self._crew.send(agent, AgentCommand.RESET, (seeds[agent.envs.start : agent.envs.stop], local))

    def reset_wait(self, timeout: float | None = None) -> tuple[Any, dict[str, Any]]:
        """Wait for the reset to finish and return the batched observation and infos."""
        results = self._finish(AgentCommand.RESET, "reset_wait", timeout)
        space = self._spaces.single_observation_space
        observations = self._own(join(space, [observations for observations, _ in results]))
        parts = [(agent.envs.start, infos) for agent, (_, infos) in zip(self._crew.agents, results, strict=True)]
        return observations, join_infos(parts, self.num_envs)

    def step(self, actions: Any) -> StepResult:
        """Step every sub-env with its action; see :meth:`step_async` and :meth:`step_wait`."""
        self.step_async(actions)
        return self.step_wait()

    def step_async(self, actions: Any) -> None:
        """Check the batch of actions and send each agent its part (nothing is sent if the actions are bad)."""
        self._gate.check_can_start("step_async", self.timeout)
        batch = self._action_batch(actions, self.num_envs)
        owed = self._owed
        owed.check_steppable(range(self.num_envs))
        with DEFERRAL:
            self._calls.start(AgentCommand.STEP)
            for agent in self._crew.agents:
                due = owed.due(agent.envs)
                if not due:
                    part = take_envs(self._spaces.single_action_space, batch, slice(agent.envs.start, agent.envs.stop))
                    self._crew.send(agent, AgentCommand.STEP, part)
                    continue
                # The rows owed to these envs are their answer: they are not stepped, the agent's others are.
                self._calls.results[agent.index] = [owed.take(due)]
                if len(due) < len(agent.envs):
                    ids = [i for i in agent.envs if i not in due]
                    part = take_envs(self._spaces.single_action_space, batch, ids)
                    self._crew.send(agent, AgentCommand.STEP_SOME, (part, [i - agent.envs.start for i in ids]), ids)

    def step_wait(self, timeout: float | None = None) -> StepResult:
        """Wait for the step to finish and return ``(observations, rewards, terminations, truncations, infos)``."""
        parts = self._finish(AgentCommand.STEP, "step_wait", timeout)
        rows = Rows.join(self._spaces.single_observation_space, [p for part in parts for p in part], True)
        return self._own(rows.observations), rows.rewards, rows.terminations, rows.truncations, rows.infos

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call the method ``name`` of every sub-env; plain attributes are returned. One result per env."""
        self.call_async(name, *args, **kwargs)
        return self.call_wait()

    def call_async(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Send ``call(name, *args, **kwargs)`` to the agents."""
        self._gate.check_can_start("call_async", self.timeout)
        if name in _RESERVED_CALLS:
            raise InvalidValueError(
                message(
                    f"call({name!r}) would bypass the vector env",
                    expected="a method other than reset, step and close",
                    got=repr(name),
                    fix=f"use {name}() directly",
                )
            )
        self._send_all(AgentCommand.CALL, lambda agent: (name, args, kwargs))

    def call_wait(self, timeout: float | None = None) -> tuple[Any, ...]:
        """Wait for a call to finish and return one result per env."""
        return tuple(value for result in self._finish(AgentCommand.CALL, "call_wait", timeout) for value in result)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Each sub-env's attribute ``name`` (a callable attribute is returned, not called)."""
        self._gate.check_can_start("get_attr", self.timeout)
        self._send_all(AgentCommand.GET_ATTR, lambda agent: name)
        results = self._finish(AgentCommand.GET_ATTR, "get_attr", None)
        return tuple(value for result in results for value in result)

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every sub-env; a list or tuple gives one value per env."""
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise InvalidValueError(
                message("set_attr values has the wrong length", expected=f"{self.num_envs} values", got=show(values))
            )
        self._gate.check_can_start("set_attr", self.timeout)
        self._send_all(AgentCommand.SET_ATTR, lambda agent: (name, list(values[agent.envs.start : agent.envs.stop])))
        self._finish(AgentCommand.SET_ATTR, "set_attr", None)

    def render(self) -> tuple[Any, ...]:
        """Each sub-env's ``render()`` result."""
        return self.call("render")

    def worker_info(self) -> list[dict[str, Any]]:
        """Per worker process of every agent: pid, envs, alive, memory, and its agent, node id and address."""
        self._gate.check_usable("worker_info")
        return self._crew.worker_info()

    def close_extras(self, timeout: float | None = None, terminate: bool = False, **kwargs: Any) -> None:
        """Stop the agents (their envs closed for up to ``timeout`` seconds, default 1), and Ray if we started it.

        Args:
            timeout: seconds the agents may take to close their envs before they are killed.
            terminate: kill the agents at once.
            **kwargs: accepted for compatibility with other vector envs; unused.
        """
        crew = getattr(self, "_crew", None)
        gate = getattr(self, "_gate", None)  # absent if the constructor failed before the agents started
        if gate is not None:
            gate.close()
        try:
            if crew is not None:
                with DEFERRAL:
                    crew.close(0.0 if terminate else (1.0 if timeout is None else timeout))
        finally:
            interrupts.unwatch()
            if getattr(self, "_started_ray", False):
                import ray

                ray.shutdown()

    def _own(self, observations: Any) -> Any:
        """With ``copy=False``, the batch written into the one buffer that each reset and step overwrites."""
        if self.copy:
            return observations
        if self._buffer is None:
            self._buffer = observations
            return observations
        self._buffer = assign(self._spaces.single_observation_space, self._buffer, observations)
        return self._buffer

    # -- pool mode -----------------------------------------------------------------------------------------

    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Step the envs ``env_ids`` (default: all) with ``actions``, without waiting for them.

        Only envs that are idle (not stepping, and whose last results were received) can be sent an action.
        """
        self._gate.check_can_send(self.timeout)
        ids = self._pool_mode.check_env_ids(env_ids)
        batch = self._action_batch(actions, len(ids))
        self._owed.check_steppable(ids)
        with DEFERRAL:
            self._pool_mode.send(self._spaces.single_action_space, batch, ids)

    def recv(self, timeout: float | None = None) -> RecvResult:
        """Wait for the first ``batch_size`` envs to finish their step and return their results.

        Returns:
            ``(observations, rewards, terminations, truncations, infos, env_ids)``, each batched over the
            returned envs in the order of ``env_ids`` (an array).
        """
        self._gate.check_usable("recv")
        self._gate.check_no_pending_call("recv")
        pool_mode = self._pool_mode
        if not pool_mode.active():
            raise NoAsyncCallError("recv was called with no env stepping; send() actions first", "send")
        self._crew.collect(pool_mode.short, self._timeout(timeout), every=False)
        self._calls.raise_errors()
        rows = pool_mode.take(self._spaces.single_observation_space)
        env_ids = np.array(rows.env_ids, dtype=np.int64)
        return rows.observations, rows.rewards, rows.terminations, rows.truncations, rows.infos, env_ids

    # -- the command cycle ---------------------------------------------------------------------------------

    def _timeout(self, timeout: float | None) -> float | None:
        return options.wait_seconds(timeout, self.timeout)

    def _send_all(self, command: AgentCommand, payload: Callable[[AgentHandle], Any]) -> None:
        with DEFERRAL:
            self._calls.start(command)
            for agent in self._crew.agents:
                self._crew.send(agent, command, payload(agent))

    def _finish(self, command: AgentCommand, call: str, timeout: float | None) -> list[Any]:
        """Wait until every agent answered ``command``; return the results in agent order; raise the first error."""
        self._gate.check_can_finish(command, call)
        try:
            return self._calls.finish(self._timeout(timeout))
        except BaseException as error:
            self._gate.abandon_on(error)
            raise

    def _deliver(self, agent: AgentHandle, answer: Answer, command: AgentCommand, note: Any) -> None:
        """Take one agent's answer (the crew calls this as answers arrive)."""
        if answer.errors:
            for record in answer.errors:
                error = rebuild_error(record)
                add_note(error, f"on {agent.where()}")
                self._calls.errors.append(error)
            if command is AgentCommand.STEP_SOME:
                self._pool_mode.failed(note)
            return
        if command is AgentCommand.STEP_SOME:
            rows = self._answer_rows(agent, answer, note)
            if self._calls.pending is AgentCommand.STEP:  # a step whose agent owed some envs their restart
                self._calls.results.setdefault(agent.index, []).append(rows)
            else:
                self._pool_mode.arrived(rows)
        elif command is AgentCommand.STEP:
            self._calls.results.setdefault(agent.index, []).append(self._answer_rows(agent, answer, list(agent.envs)))
        else:
            if command is AgentCommand.RESET:
                self._owed.forget(self._reset_envs)
            self._calls.results[agent.index] = answer.result

    def _answer_rows(self, agent: AgentHandle, answer: Answer, env_ids: list[int]) -> Rows:
        if answer.result is None:  # owed by an agent that died: its replacement's restart rows stand in
            return self._owed.take(env_ids)
        observations, rewards, terminations, truncations, infos, *returned = answer.result
        ids = [int(i) for i in returned[0]] if returned else env_ids
        return Rows(observations, rewards, terminations, truncations, infos, ids)

    def _action_batch(self, actions: Any, count: int) -> Any:
        """``actions`` as a checked batch of ``count`` actions (any array-like that converts exactly)."""
        space = self._spaces.batched_action_space(count)
        batch = as_action_batch(space, actions)
        if not isinstance(batch, np.ndarray):
            split_action_batch(space, batch, count)  # checks the batch size of every leaf
        return batch


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError('RayVectorEnv needs Ray: pip install "vecspaces[ray]" (or pip install "ray>=2.60")') from None
    return ray
