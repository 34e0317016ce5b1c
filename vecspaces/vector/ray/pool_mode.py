"""The state of ``send``/``recv`` of a ``RayVectorEnv``: the envs stepping, and finished rows not yet received."""

from __future__ import annotations

from typing import Any

import numpy as np

from vecspaces.error import AlreadyPendingCallError, InvalidValueError, message, show
from vecspaces.spaces import Space
from vecspaces.vector._async.observations import take_envs
from vecspaces.vector.ray.batches import Rows
from vecspaces.vector.ray.crew import AgentHandle, Crew
from vecspaces.vector.ray.protocol import AgentCommand
from vecspaces.vector.ray.restarts import OwedRows

__all__ = ["PoolMode"]


class PoolMode:
    """Which envs step in pool mode, and the rows of those that finished, in order of arrival.

    Args:
        crew: the agents.
        owed: the rows owed to replaced agents' envs (answered without stepping them).
        num_envs: the vector env's envs.
        batch_size: how many envs ``recv`` returns.
    """

    def __init__(self, crew: Crew, owed: OwedRows, num_envs: int, batch_size: int) -> None:
        self.crew = crew
        self.owed = owed
        self.num_envs = num_envs
        self.batch_size = batch_size
        self.in_flight: set[int] = set()
        self.finished: list[Rows] = []

    def active(self) -> bool:
        """Whether any env is sent and not received yet."""
        return bool(self.in_flight or self.finished)

    def busy_envs(self) -> list[int]:
        """The envs sent and not received yet (stepping, or finished and waiting for ``recv``)."""
        return sorted(self.in_flight.union(i for rows in self.finished for i in rows.env_ids))

    def check_env_ids(self, env_ids: Any) -> list[int]:
        """``env_ids`` (None: all) as a list, checked: distinct, in range, and idle."""
        ids = list(range(self.num_envs)) if env_ids is None else np.asarray(env_ids).reshape(-1).tolist()
        if not ids or len(set(ids)) != len(ids) or not all(isinstance(i, int) and 0 <= i < self.num_envs for i in ids):
            expected = f"distinct env indices in [0, {self.num_envs})"
            raise InvalidValueError(message("env_ids is invalid", expected=expected, got=show(env_ids)))
        busy = sorted(set(self.busy_envs()).intersection(ids))
        if busy:
            raise AlreadyPendingCallError(
                f"send was called for envs {busy} whose step is not received yet; recv() first", "send"
            )
        return ids

    def send(self, action_space: Space[Any], batch: Any, ids: list[int]) -> None:
        """Send each agent the actions of its envs among ``ids`` (``batch``, in the order of ``ids``)."""
        for agent in self.crew.agents:
            positions = [p for p, i in enumerate(ids) if i in agent.envs]
            if not positions:
                continue
            due = self.owed.due(ids[p] for p in positions)
            if due:
                self.finished.append(self.owed.take(due))
                positions = [p for p in positions if ids[p] not in due]
                if not positions:
                    continue
            mine = [ids[p] for p in positions]
            self.in_flight.update(mine)
            local = [i - agent.envs.start for i in mine]
            self.crew.send(agent, AgentCommand.STEP_SOME, (take_envs(action_space, batch, positions), local), mine)

    def arrived(self, rows: Rows) -> None:
        """Envs finished their step."""
        self.in_flight.difference_update(rows.env_ids)
        self.finished.append(rows)

    def failed(self, env_ids: list[int]) -> None:
        """Envs' step raised: they are idle again (the error is raised by ``recv``)."""
        self.in_flight.difference_update(env_ids)

    def short(self) -> list[AgentHandle]:
        """The agents to wait for while fewer than ``batch_size`` envs finished."""
        if sum(len(rows.env_ids) for rows in self.finished) >= self.batch_size:
            return []
        return self.crew.pending()

    def take(self, space: Space[Any]) -> Rows:
        """The first ``batch_size`` finished envs' rows (the others wait for the next ``recv``)."""
        rows = Rows.join(space, self.finished)
        self.finished = []
        if len(rows.env_ids) > self.batch_size:
            rows, rest = rows.take(space, slice(None, self.batch_size)), rows.take(space, slice(self.batch_size, None))
            self.finished.append(rest)
        return rows
