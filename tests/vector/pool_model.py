"""A reference model of an AsyncVectorEnv with ``restart_workers=True``, for the pool fuzz test.

Each env of the pool has a twin here: a one-env :class:`~vecspaces.vector.SyncVectorEnv` over the same factory,
stepped in this process. The model predicts, per env, the outcomes the pool may return for a call: one outcome
when everything is certain, two when a worker was killed while the env's step was under way (the step finished
before the kill, or the worker was restarted), and checks every row the pool returns against them.

The restart rule it enforces (README, Robustness): when a worker is restarted, every env of that worker is a
fresh env from its factory, and the first result of each such env afterwards says so: a step's row is the env's
reset (``seed=None``) with ``reward=0``, ``terminated=False``, ``truncated=True`` and ``info["worker_restarted"]``,
after which the next step is the reset step, as after any truncation (NEXT_STEP); a reset that selects it resets
it with its seed and options and flags its info. An env "owes" that result from the kill of its worker until the
pool returns it. A ``call``/``get_attr``/``set_attr`` that finds the worker dead runs on the fresh envs, reset
for it, and settles nothing (a call's result is no row).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vecspaces.vector import SyncVectorEnv

__all__ = ["Candidate", "EnvError", "PoolModel", "RefEnv", "Row", "env_info"]


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value, anything else as it is."""
    return value.item() if isinstance(value, np.generic) else value


def env_info(infos: dict[str, Any], i: int) -> dict[str, Any]:
    """Env ``i``'s own info out of a batched info dict (the keys whose ``_key`` mask is set for it)."""
    return {
        key: _plain(value[i])
        for key, value in infos.items()
        if not key.startswith("_") and bool(infos.get("_" + key, np.zeros(i + 1, dtype=bool))[i])
    }


@dataclass(frozen=True)
class Row:
    """One env's row of a result: observation, reward, flags and info, as plain Python values."""

    obs: tuple[int, ...]
    reward: float
    terminated: bool
    truncated: bool
    info: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, obs: Any, reward: Any, terminated: Any, truncated: Any, info: dict[str, Any]) -> Row:
        """A row from arrays and numpy scalars."""
        return cls(
            tuple(int(x) for x in np.asarray(obs).reshape(-1)),
            float(reward),
            bool(terminated),
            bool(truncated),
            tuple(sorted((k, _plain(v)) for k, v in info.items())),
        )


@dataclass(frozen=True)
class EnvError:
    """The outcome of a step that raises :class:`~tests.vector.fuzz_envs.FuzzEnvError` in env ``label``."""

    label: int


Outcome = Row | EnvError


class RefEnv:
    """The twin of one pool env: a one-env SyncVectorEnv over the same factory (same autoreset rules)."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.vec = SyncVectorEnv([fn])

    def copy(self) -> RefEnv:
        """An independent copy (steps of the copy leave this one as it is)."""
        return copy.deepcopy(self)

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> tuple[tuple[int, ...], dict[str, Any]]:
        """Reset; return the observation and the info."""
        obs, infos = self.vec.reset(seed=seed, options=options)
        return Row.of(obs, 0, False, False, {}).obs, env_info(infos, 0)

    def end_episode(self) -> None:
        """Mark the episode over, so that the next step is the reset step (NEXT_STEP)."""
        self.vec._runners[0].episode_ended = True

    def step(self, action: int) -> Outcome:
        """Step with ``action``; the row, or the error the env raised."""
        from tests.vector.fuzz_envs import FuzzEnvError

        try:
            obs, rewards, terminations, truncations, infos = self.vec.step(np.array([action]))
        except FuzzEnvError:
            return EnvError(int(self.vec.get_attr("label")[0]))
        return Row.of(obs, rewards[0], terminations[0], truncations[0], env_info(infos, 0))

    def call(self, name: str, *args: Any) -> Any:
        """``call(name, *args)``'s result for this env."""
        return self.vec.call(name, *args)[0]

    def get_attr(self, name: str) -> Any:
        """``get_attr(name)``'s value for this env."""
        return self.vec.get_attr(name)[0]

    def set_attr(self, name: str, value: Any) -> None:
        """``set_attr(name, ...)`` with this env's value."""
        self.vec.set_attr(name, [value])


@dataclass
class Candidate:
    """One outcome an env's pending step may have, and the env's twin after it."""

    outcome: Outcome
    env: RefEnv
    restarted: bool  # the outcome is a restart row (it settles the env's debt)


@dataclass
class PoolModel:
    """What the pool must return, env by env.

    Args:
        fns: the env factories.
        slices: the env indices of each worker (from ``worker_info()``).
        batch_size: the pool's batch size (what ``recv`` returns at most).
    """

    fns: list[Callable[[], Any]]
    slices: list[list[int]]
    batch_size: int
    envs: list[RefEnv] = field(init=False)
    # The observations a masked-out env may show in a reset (its last one; two after a silent reset).
    last_obs: list[list[tuple[int, ...]]] = field(init=False)
    # Envs whose worker was killed and that have not yet returned their restart row.
    owed: list[bool] = field(init=False)
    # Owed envs whose replacement was reset for a call (their twin is that env).
    fresh: list[bool] = field(init=False)
    # Owed envs that may have returned their restart row already (it went down with an env error).
    ambiguous: set[int] = field(default_factory=set)
    # The pending step_async: per env, its candidates (None: no step pending).
    pending: dict[int, list[Candidate]] | None = None
    # Pool mode: per env sent and not yet received, its candidates.
    in_flight: dict[int, list[Candidate]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.num_envs = len(self.fns)
        self.envs = [RefEnv(fn) for fn in self.fns]
        self.last_obs = [[] for _ in self.fns]
        self.owed = [False] * self.num_envs
        self.fresh = [False] * self.num_envs

    def worker_of(self, i: int) -> int:
        """The worker that runs env ``i``."""
        return next(w for w, envs in enumerate(self.slices) if i in envs)

    # -- what each call must return --------------------------------------------------------------------

    def replacement(self, i: int) -> RefEnv:
        """The twin of env ``i``'s replacement: fresh from its factory, or the one a call reset."""
        return self.envs[i].copy() if self.fresh[i] else RefEnv(self.fns[i])

    def restart_candidate(self, i: int) -> Candidate:
        """Env ``i``'s restart row: its replacement reset with ``seed=None``, truncated, flagged; its episode over."""
        env = self.replacement(i)
        obs, info = env.reset(None, None)
        env.end_episode()
        row = Row.of(np.array(obs), 0.0, False, True, {**info, "worker_restarted": True})
        return Candidate(row, env, restarted=True)

    def step_candidates(self, i: int, action: int) -> list[Candidate]:
        """What env ``i`` may return for a step with ``action`` sent now."""
        if not self.owed[i]:
            env = self.envs[i].copy()
            return [Candidate(env.step(action), env, restarted=False)]
        candidates = [self.restart_candidate(i)]
        if i in self.ambiguous:  # its restart row was returned already: this step is the reset step after it
            env = self.envs[i].copy()
            env.end_episode()
            candidates.append(Candidate(env.step(action), env, restarted=True))
        return candidates

    def kill(self, w: int) -> None:
        """Worker ``w`` was killed: its envs owe a restart row; their steps under way may end either way."""
        for i in self.slices[w]:
            self.owed[i] = True
            self.fresh[i] = False  # a new replacement will be built
            self.ambiguous.discard(i)
            for pending in (self.pending, self.in_flight):
                candidates = None if pending is None else pending.get(i)
                if candidates is not None:  # a new replacement: its restart row is a new outcome
                    restart = self.restart_candidate(i)
                    if all(c.outcome != restart.outcome for c in candidates):
                        candidates.append(restart)

    def resolve(self, i: int, outcome: Outcome) -> Candidate | None:
        """The candidate of env ``i``'s pending step that ``outcome`` matches, applied to the model; None: none."""
        candidates = self.pending[i] if self.pending is not None and i in self.pending else self.in_flight[i]
        for candidate in candidates:
            if candidate.outcome == outcome:
                self.apply(i, candidate)
                return candidate
        return None

    def apply(self, i: int, candidate: Candidate) -> None:
        """Env ``i`` had ``candidate``'s outcome."""
        self.envs[i] = candidate.env
        if candidate.restarted:
            self.owed[i] = self.fresh[i] = False
            self.ambiguous.discard(i)
        if isinstance(candidate.outcome, Row):
            self.last_obs[i] = [candidate.outcome.obs]

    def settle_by_call(self, i: int) -> None:
        """A call found env ``i``'s worker dead (or restarted): it runs on the replacement, reset for it."""
        if not self.fresh[i]:
            env = RefEnv(self.fns[i])
            env.reset(None, None)
            self.envs[i] = env
            self.fresh[i] = True

    def settle_ambiguously(self, i: int) -> None:
        """Env ``i``'s step raced a kill and the call raised: its restart row was returned and lost, or is owed.

        Either way its replacement was reset once (for the row, or for the next call); the next step tells which.
        """
        if not self.fresh[i]:
            env = RefEnv(self.fns[i])
            obs, _ = env.reset(None, None)
            self.envs[i] = env
            self.fresh[i] = True
            self.last_obs[i] = [*self.last_obs[i], obs]  # the restart row's, which a masked reset may show
        self.owed[i] = True
        self.ambiguous.add(i)

    def reset(
        self, seeds: list[int | None], options: dict[str, Any] | None, mask: list[bool] | None
    ) -> list[tuple[list[tuple[int, ...]], list[dict[str, Any]] | None]]:
        """Reset; per env, the observations it may show and the infos it may have (None: it was not reset)."""
        results: list[tuple[list[tuple[int, ...]], list[dict[str, Any]] | None]] = []
        for i in range(self.num_envs):
            selected = mask is None or mask[i]
            if not selected:
                results.append((self.last_obs[i], None))  # an owed env stays owed
                continue
            env = self.replacement(i) if self.owed[i] else self.envs[i]
            obs, info = env.reset(seeds[i], options)
            infos = [info]
            if self.owed[i]:
                infos = [{**info, "worker_restarted": True}, *([info] if i in self.ambiguous else [])]
            self.envs[i] = env
            self.owed[i] = self.fresh[i] = False
            self.ambiguous.discard(i)
            results.append(([obs], infos))
        return results

    def calls(self, method: Callable[[RefEnv], Any]) -> list[Any]:
        """Per env, ``method(twin)`` after settling the envs owed a restart (a call restarts a dead worker)."""
        for i in range(self.num_envs):
            if self.owed[i]:
                self.settle_by_call(i)
        return [method(env) for env in self.envs]
