"""The results owed to the envs of a replaced agent: each one's next step reports its restart, as in the local pool."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

import numpy as np

from vecspaces.spaces import Space
from vecspaces.vector._runner import episode_ended
from vecspaces.vector.ray.batches import Rows
from vecspaces.vector.vector_env import AutoresetMode

__all__ = ["OwedRows"]


class OwedRows:
    """Per env of a replaced agent, the rows its next steps return instead of stepping it.

    A replacement's envs start reset. So each env's next step returns its restart row (the reset observation,
    reward 0, ``truncated``, ``info["worker_restarted"]``) without applying the action, and in NEXT_STEP mode the
    step after it is the reset step that follows any truncation (the same observation, reward 0, both flags
    False); in DISABLED mode its next step is refused until it is reset, as after any truncation. A reset of the
    env cancels what it is owed.

    Args:
        space: the single observation space.
        mode: the vector env's autoreset mode.
    """

    def __init__(self, space: Space[Any], mode: AutoresetMode) -> None:
        self.space = space
        self.mode = mode
        self.owed: dict[int, deque[Rows]] = {}
        self.must_reset: set[int] = set()  # DISABLED mode: envs that reported their restart, not reset since

    def owe(self, env_ids: range, restart: tuple[Any, ...]) -> None:
        """Owe the envs ``env_ids`` their restart, from the replacement's restart rows (``RESTART_ROWS``)."""
        observations, rewards, terminations, truncations, infos = restart
        rows = Rows(observations, rewards, terminations, truncations, infos, list(env_ids))
        for position, env in enumerate(env_ids):
            row = rows.take(self.space, [position])
            owed = deque([row])
            if self.mode is AutoresetMode.NEXT_STEP:
                info = {key: value for key, value in row.infos.items() if not key.endswith("worker_restarted")}
                flags = np.zeros(1, dtype=np.bool_)
                owed.append(Rows(row.observations, np.zeros(1), flags, flags.copy(), info, [env]))
            self.owed[env] = owed

    def due(self, env_ids: Iterable[int]) -> list[int]:
        """The envs among ``env_ids`` that are owed rows."""
        return [env for env in env_ids if env in self.owed] if self.owed else []

    def take(self, env_ids: list[int]) -> Rows:
        """The next owed rows of the envs ``env_ids``, in their order."""
        rows = []
        for env in env_ids:
            owed = self.owed[env]
            rows.append(owed.popleft())
            if not owed:
                del self.owed[env]
                if self.mode is AutoresetMode.DISABLED:
                    self.must_reset.add(env)
        return Rows.join(self.space, rows)

    def check_steppable(self, env_ids: Iterable[int]) -> None:
        """Raise if one of ``env_ids`` reported its restart (a truncation) and, autoreset disabled, needs a reset.

        Raises:
            EpisodeEndedError: naming the first such env, as the local pool does.
        """
        ended = [env for env in env_ids if env in self.must_reset] if self.must_reset else []
        if ended:
            raise episode_ended(ended[0], " (its agent was replaced)")

    def forget(self, env_ids: Iterable[int]) -> None:
        """The envs ``env_ids`` were reset: they are owed nothing."""
        for env in env_ids:
            self.owed.pop(env, None)
            self.must_reset.discard(env)
