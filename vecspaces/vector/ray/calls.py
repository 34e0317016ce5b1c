"""The Gymnasium-style call in progress on a ``RayVectorEnv``'s agents: its command, its answers so far, its errors.

Which call may start is decided by the local pool's rules (``vecspaces.vector._async.gate.CallGate``); this is
what they ask about, kept over the crew of agents instead of a worker pool.
"""

from __future__ import annotations

from typing import Any

from vecspaces.vector.ray.crew import Crew
from vecspaces.vector.ray.protocol import AgentCommand

__all__ = ["AgentCalls"]


class AgentCalls:
    """The pending call of a ``RayVectorEnv`` and what the agents answered to it.

    Args:
        crew: the agents.
    """

    def __init__(self, crew: Crew) -> None:
        self.crew = crew
        self.pending: AgentCommand | None = None
        self.abandoned = False  # an interrupt ended the pending call for its caller: nobody will collect it
        self.results: dict[int, Any] = {}  # its answers so far, per agent
        self.errors: list[BaseException] = []

    def start(self, command: AgentCommand | None) -> None:
        """``command`` is sent (None: nothing pending any more); forget the last call's answers."""
        self.pending, self.abandoned, self.results, self.errors = command, False, {}, []

    def finish(self, timeout: float | None) -> list[Any]:
        """Wait until every agent answered the pending call; return its results in agent order.

        Raises:
            Exception: the first error an agent answered with (the call is over).
            WaitTimeoutError: ``timeout`` passed first; the call stays pending.
        """
        self.crew.collect(self.crew.pending, timeout)
        self.pending = None
        self.raise_errors()
        results, self.results = self.results, {}
        return [results[agent.index] for agent in self.crew.agents]

    def raise_errors(self) -> None:
        """Raise the first error answered since the last call (and forget them)."""
        if self.errors:
            errors, self.errors = self.errors, []
            raise errors[0]

    def drop_abandoned(self, timeout: float | None) -> None:
        """Collect and drop the pending call if an interrupt abandoned it."""
        if self.pending is not None and self.abandoned:
            self.crew.collect(self.crew.pending, timeout)
            self.start(None)
