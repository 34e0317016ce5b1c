"""The driver's side of the agents: starting them, sending commands, collecting answers, replacing the dead.

The crew knows nothing of the batch: it hands every answer, in order of arrival, to the vector env's ``deliver``
callback with the command and the note it was sent with. A dead agent either breaks the crew (every later call
raises the same :class:`~vecspaces.error.WorkerDiedError`) or, with ``restart``, is replaced by a warmed-up
standby: the replacement's envs are reset, their rows handed to the vector env's ``restarted`` callback (which
owes them to the envs, see ``restarts``), and the commands the dead agent owed are redone by the replacement or
answered from those rows.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vecspaces.error import WaitTimeoutError, WorkerDiedError
from vecspaces.vector._async import interrupts
from vecspaces.vector._async.protocol import EnvError, add_note, raise_env_errors, rebuild_error
from vecspaces.vector.ray.agent import Agent
from vecspaces.vector.ray.links import AgentDied, Link, RayLink, SocketLink, wait_for_answers
from vecspaces.vector.ray.placement import AgentPlan, replacement_options
from vecspaces.vector.ray.protocol import AgentCommand, Answer, Description, PlainStep
from vecspaces.vector.ray.shared_block import SharedBlock

__all__ = ["AgentHandle", "Crew"]

# Waits block in slices this long, so that a Ctrl-C is raised promptly between two of them.
_WAIT_SLICE_SECONDS = 0.05
DEFERRAL = interrupts.deferred()


@dataclass
class AgentHandle:
    """One agent as the driver sees it.

    Attributes:
        index: its place among the agents.
        envs: the envs it runs.
        plan: how it was placed (a replacement is placed alike).
        actor: its Ray actor handle.
        link: its channel, once open.
        description: what it said of its envs and itself.
    """

    index: int
    envs: range
    plan: AgentPlan
    actor: Any
    link: Link | None = None
    description: Description | None = None

    def where(self) -> str:
        """``agent k, node X (address)``, for messages."""
        if self.description is None:
            return f"agent {self.index}"
        return f"agent {self.index}, node {self.description.node_id[:12]} ({self.description.host})"


Deliver = Callable[[AgentHandle, Answer, AgentCommand, Any], None]
Restarted = Callable[[AgentHandle, Answer], None]


class Crew:
    """The agents of one ``RayVectorEnv``.

    Args:
        ray: the ``ray`` module.
        env_fns: the vector env's env factories.
        plans: one per agent.
        pool_options: the local pools' options (``num_workers`` comes from each plan).
        transport: ``"socket"`` or ``"ray"``.
        startup_timeout: how long agents may take to build their envs, in seconds.
        restart: replace dead agents instead of breaking.
    """

    def __init__(
        self,
        ray: Any,
        env_fns: list[Any],
        plans: list[AgentPlan],
        pool_options: dict[str, Any],
        transport: str,
        startup_timeout: float,
        restart: bool,
    ) -> None:
        self.ray = ray
        self.env_fns = env_fns
        self.pool_options = pool_options
        self.transport = transport
        self.startup_timeout = startup_timeout
        self.restart = restart
        self.restarts = 0
        self.broken: str | None = None
        self.actor_class = ray.remote(Agent)
        self.standbys: dict[str | None, Any] = {}  # with restart: per node, an agent waiting to replace one
        self.agents = [AgentHandle(k, plan.envs, plan, None) for k, plan in enumerate(plans)]
        self.node_id: str | None = None  # the driver's, once needed
        # Set by the vector env: where answers go, where a replacement's restart rows go, and the plain step of
        # an agent's socket (see ``protocol``).
        self.deliver: Deliver
        self.restarted: Restarted
        self.plain_step: Callable[[AgentHandle], PlainStep | None]

    # -- starting ------------------------------------------------------------------------------------------

    def start(self, agents: list[AgentHandle]) -> None:
        """Start ``agents`` together: create their actors and wait for their envs (then :meth:`connect` them).

        Raises:
            WaitTimeoutError: they took longer than ``startup_timeout``.
            WorkerDiedError: an agent died while starting.
            Exception: what an env raised while being built, of its own type, with the agent in a note.
        """
        started = []
        for agent in agents:
            if agent.actor is None:
                agent.actor = self._new_actor(agent.plan.options)
            pool_options = {**self.pool_options, "num_workers": agent.plan.workers}
            envs = agent.envs
            fns = self.env_fns[envs.start : envs.stop]
            started.append(agent.actor.start.remote(fns, envs.start, pool_options, agent.plan.cpus))
        try:
            descriptions = self.ray.get(started, timeout=self.startup_timeout)
        except self.ray.exceptions.GetTimeoutError:
            raise WaitTimeoutError(
                f"the agents did not build their envs within startup_timeout={self.startup_timeout} s; "
                f"raise it if building the envs takes that long"
            ) from None
        except self.ray.exceptions.RayActorError as error:
            raise WorkerDiedError(f"an agent died while it built its envs: {error}") from None
        for agent, description in zip(agents, descriptions, strict=True):
            if isinstance(description, Answer):
                failure = rebuild_error(description.errors[0])
                add_note(failure, f"on {agent.where()}")
                raise failure
            agent.description = description

    def _new_actor(self, options: dict[str, Any]) -> Any:
        # Never Ray's own restarts and retries: a retried step would be replayed on a fresh agent, silently.
        return self.actor_class.options(**options, max_restarts=0, max_task_retries=0).remote()

    def keep_standbys(self) -> None:
        """With ``restart``: keep one warmed-up, empty agent on each node that has agents, to replace one that dies.

        A replacement then skips the start of a Ray worker process and of its local pool's forkserver (about
        1.5 s here), and only builds its envs.
        """
        for agent in self.agents:
            key = _node_of(agent.plan.options)
            if key not in self.standbys:
                standby = self._new_actor(replacement_options(agent.plan.options))
                standby.warm.remote(self.pool_options["context"])
                self.standbys[key] = standby

    def connect(self, agents: list[AgentHandle]) -> None:
        """Open ``agents``' links (started, and :attr:`plain_step` set)."""
        if self.transport == "ray":
            for agent in agents:
                agent.link = RayLink(agent.actor)
            return
        plains = [self.plain_step(agent) for agent in agents]
        blocks = [self._shared_block(agent, plain) for agent, plain in zip(agents, plains, strict=True)]
        plains = [
            plain if block is None or plain is None else dataclasses.replace(plain, shared_path=block.path)
            for plain, block in zip(plains, blocks, strict=True)
        ]
        try:
            sockets = self.ray.get(
                [agent.actor.open_socket.remote(plain) for agent, plain in zip(agents, plains, strict=True)],
                timeout=self.startup_timeout,
            )
        except BaseException:
            for block in blocks:
                if block is not None:
                    block.close()
            raise
        finally:
            for block in blocks:  # the agents mapped them, or never will: the names can go
                if block is not None:
                    block.unlink()
        for agent, (address, authkey), plain, block in zip(agents, sockets, plains, blocks, strict=True):
            agent.link = SocketLink(agent.actor, address, authkey, plain, block)

    def _shared_block(self, agent: AgentHandle, plain: PlainStep | None) -> SharedBlock | None:
        """A block of shared memory for ``agent``'s observations, if its steps are plain and it is on this node."""
        if plain is None or agent.description is None:
            return None
        if self.node_id is None:
            self.node_id = self.ray.get_runtime_context().get_node_id()
        if agent.description.node_id != self.node_id:
            return None
        return SharedBlock.create(plain.observation_bytes)

    # -- commands ------------------------------------------------------------------------------------------

    def send(self, agent: AgentHandle, command: AgentCommand, payload: Any, note: Any = None) -> None:
        """Send ``agent`` a command; its answer goes to ``deliver`` with ``note`` when collected."""
        assert agent.link is not None
        try:
            agent.link.send(command, payload, (payload, note))
        except AgentDied as death:
            # Sent nothing: the command is redone or answered by the replacement as if it had been pending.
            agent.link.pending.append((command, (payload, note)))
            self._died(agent, str(death), command)

    def pending(self) -> list[AgentHandle]:
        """The agents that owe answers."""
        return [agent for agent in self.agents if agent.link is not None and agent.link.pending]

    def collect(self, agents: Callable[[], list[AgentHandle]], timeout: float | None, every: bool = True) -> None:
        """Collect answers until ``agents()`` is empty, handing each to :attr:`deliver`.

        ``every``: whether it takes every pending answer (False: answers are wanted as soon as each is ready).

        Raises:
            WaitTimeoutError: ``timeout`` passed first; what was collected was delivered, the rest stays pending.
            WorkerDiedError: an agent died and is not replaced.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            waiting = agents()
            if not waiting:
                return
            remaining = _WAIT_SLICE_SECONDS if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                raise WaitTimeoutError(
                    f"envs {[i for a in waiting for i in a.envs]} did not answer within {timeout} s; "
                    f"the call is still pending: wait for it again to collect its results"
                )
            links = {id(agent.link): agent for agent in waiting}
            waits = [agent.link for agent in waiting if agent.link is not None]
            for link in wait_for_answers(waits, min(remaining, _WAIT_SLICE_SECONDS), every):
                with DEFERRAL:
                    self._receive(links[id(link)])
            interrupts.checkpoint()

    def _receive(self, agent: AgentHandle) -> None:
        assert agent.link is not None
        command = agent.link.pending[0][0]
        try:
            answer, command, (_, note) = agent.link.receive()
        except AgentDied as death:
            self._died(agent, str(death), command)
            return
        self.deliver(agent, answer, command, note)

    def _run(self, agent: AgentHandle, command: AgentCommand) -> Answer:
        """A freshly started agent's answer to one command (nothing else is pending on it)."""
        assert agent.link is not None
        agent.link.send(command, None)
        answer, _, _ = agent.link.receive()
        return answer

    # -- death and restarts ----------------------------------------------------------------------------------

    def _died(self, agent: AgentHandle, detail: str, command: AgentCommand) -> None:
        envs = f"envs {agent.envs.start}-{agent.envs.stop - 1}"
        problem = f"{agent.where()} ({envs}) died during {command.name.lower()}: {detail}"
        if not self.restart:
            self.broken = f"{problem}; the vector env is broken, close it (restart_agents=True replaces dead agents)"
            raise WorkerDiedError(self.broken)
        owed = list(agent.link.pending) if agent.link is not None else []
        self.stop([agent])
        agent.plan.options = replacement_options(agent.plan.options)
        try:
            self._replace(agent)
        except BaseException as error:
            self.broken = f"{problem}; its replacement failed to start: {error}"
            raise WorkerDiedError(self.broken) from error
        try:
            rows = self._run(agent, AgentCommand.RESTART_ROWS)
        except AgentDied as death:
            self.broken = f"{problem}; its replacement died too: {death}"
            raise WorkerDiedError(self.broken) from None
        self.restarts += 1
        self.restarted(agent, rows)
        for owed_command, (payload, note) in owed:
            if owed_command in (AgentCommand.STEP, AgentCommand.STEP_SOME):
                self.deliver(agent, Answer(), owed_command, note)  # answered from the restart rows
            else:
                assert agent.link is not None
                agent.link.send(owed_command, payload, (payload, note))

    def _replace(self, agent: AgentHandle) -> None:
        """Start ``agent`` again: in its node's standby if that is alive, else in a new actor; then a new standby."""
        key = _node_of(agent.plan.options)
        agent.actor, agent.description = self.standbys.pop(key, None), None
        if agent.actor is not None:
            with contextlib.suppress(WorkerDiedError):  # the standby died with its node
                self.start([agent])
        if agent.description is None:
            agent.actor = None
            self.start([agent])
        self.connect([agent])
        standby = self._new_actor(agent.plan.options)
        standby.warm.remote(self.pool_options["context"])
        self.standbys[key] = standby

    # -- stopping ------------------------------------------------------------------------------------------

    def stop(self, agents: list[AgentHandle], grace: float = 0.0) -> list[EnvError]:
        """Close ``agents``' envs politely for up to ``grace`` seconds, then kill their actors.

        Returns:
            The errors of the envs whose ``close()`` raised, among the agents that closed in time.
        """
        closing = []
        for agent in agents:
            if agent.link is not None:
                agent.link.close()
                agent.link = None
            if agent.actor is not None and grace > 0:
                closing.append(agent.actor.close.remote())
        closed: list[Any] = []
        if closing:
            with contextlib.suppress(Exception):  # stopping must finish: the kill below ends whatever is left
                closed, _ = self.ray.wait(closing, num_returns=len(closing), timeout=grace)
        errors: list[EnvError] = []
        for answer in closed:
            with contextlib.suppress(Exception):  # an agent that died while closing answers nothing
                errors += self.ray.get(answer).errors
        for agent in agents:
            if agent.actor is not None:
                with contextlib.suppress(Exception):  # already gone
                    self.ray.kill(agent.actor, no_restart=True)
                agent.actor = None
        return errors

    def close(self, grace: float) -> None:
        """Stop every agent (see :meth:`stop`) and the standbys, then raise the first env's ``close()`` error."""
        errors = self.stop(self.agents, grace)
        for standby in self.standbys.values():
            with contextlib.suppress(Exception):
                self.ray.kill(standby, no_restart=True)
        self.standbys.clear()
        raise_env_errors(errors)

    def worker_info(self) -> list[dict[str, Any]]:
        """Every agent's local workers, each with its agent, node and address."""
        infos = self.ray.get([agent.actor.worker_info.remote() for agent in self.agents])
        for agent, workers in zip(self.agents, infos, strict=True):
            for worker in workers:
                assert agent.description is not None
                worker.update(agent=agent.index, node_id=agent.description.node_id, address=agent.description.host)
        return [worker for workers in infos for worker in workers]


def _node_of(options: dict[str, Any]) -> str | None:
    """The node an agent's options place it on, if they name one."""
    return getattr(options["scheduling_strategy"], "node_id", None)
