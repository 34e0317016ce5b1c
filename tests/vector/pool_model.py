"""A reference model of an AsyncVectorEnv with ``restart_workers=True``, for the pool fuzz test.

Each env of the pool has twins here: one-env :class:`~vecspaces.vector.SyncVectorEnv` copies over the same
factory, stepped in this process, one for each state the env may be in. Mostly there is one. A worker killed
while its envs were stepping makes two: the step finished before the kill (its result is delivered and the env
is replaced afterwards) or the replacement redid it. A call that raises hides the other envs' outcomes, so each
keeps every twin it may have become. Every result the pool returns keeps the twins that predicted it; when none
did, the pool is wrong.

The restart rule it enforces (README, Robustness), written here apart from the pool's code: an env whose worker
was replaced is a fresh env from its factory, and its first result afterwards says so. A step's row is its reset
(``seed=None``) with ``reward=0``, ``terminated=False``, ``truncated=True`` and ``info["worker_restarted"]``, and
the next step is the reset step, as after any truncation (NEXT_STEP). A reset that selects it resets it with its
seed and options and flags its info. A ``call``/``get_attr``/``set_attr`` runs on it, reset once first if it was
never reset, and settles nothing (a call's result is no row).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vecspaces.vector import SyncVectorEnv

__all__ = ["Alternative", "EnvError", "PoolModel", "RefEnv", "Row", "env_info"]


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
    """One state a pool env may be in: a one-env SyncVectorEnv over its factory, plus the restart rule's state.

    Args:
        fn: the env factory.
        replacement: it replaces an env whose worker died (it owes the report of that).
        shown: the observation in the env's slot of the pool's observation buffer.
    """

    def __init__(self, fn: Callable[[], Any], replacement: bool = False, shown: tuple[int, ...] = ()) -> None:
        self.fn = fn
        self.vec = SyncVectorEnv([fn])
        self.owed = replacement  # it has not yet reported that it replaces an env whose worker died
        self.ready = False  # reset at least once
        self.shown = shown

    def copy(self) -> RefEnv:
        """An independent copy (steps of the copy leave this one as it is)."""
        return copy.deepcopy(self)

    def replaced(self) -> RefEnv:
        """The env its worker's replacement builds: fresh from the factory, owing the report."""
        return RefEnv(self.fn, replacement=True, shown=self.shown)

    def key(self) -> tuple[Any, ...]:
        """Everything that tells two states apart."""
        return (self.vec.call("state")[0], self.vec._runners[0].episode_ended, self.owed, self.ready, self.shown)

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> tuple[tuple[int, ...], dict[str, Any]]:
        """Reset; return the observation and the info."""
        obs, infos = self.vec.reset(seed=seed, options=options)
        info = env_info(infos, 0)
        if self.owed:
            info["worker_restarted"] = True
        self.owed = False
        self.ready = True
        self.shown = Row.of(obs, 0, False, False, {}).obs
        return self.shown, info

    def step(self, action: int) -> Outcome:
        """Step with ``action``; the row, or the error the env raised."""
        from tests.vector.fuzz_envs import FuzzEnvError

        if self.owed:  # the restart report: the reset, as a truncation; the next step is the reset step
            obs, info = self.reset(None, None)
            self.vec._runners[0].episode_ended = True
            return Row.of(np.array(obs), 0.0, False, True, info)
        try:
            obs, rewards, terminations, truncations, infos = self.vec.step(np.array([action]))
        except FuzzEnvError:
            return EnvError(int(self.vec.get_attr("label")[0]))
        row = Row.of(obs, rewards[0], terminations[0], truncations[0], env_info(infos, 0))
        self.shown = row.obs
        return row

    def _before_call(self) -> None:
        if self.owed and not self.ready:
            self.vec.reset()
            self.ready = True

    def call(self, name: str, *args: Any) -> Any:
        """``call(name, *args)``'s result for this env."""
        self._before_call()
        return self.vec.call(name, *args)[0]

    def get_attr(self, name: str) -> Any:
        """``get_attr(name)``'s value for this env."""
        self._before_call()
        return self.vec.get_attr(name)[0]

    def set_attr(self, name: str, value: Any) -> None:
        """``set_attr(name, ...)`` with this env's value."""
        self._before_call()
        self.vec.set_attr(name, [value])


# What a call may return for one env, and the state the env is in if it did.
Alternative = tuple[Any, RefEnv]


def _unique(alternatives: Iterable[Alternative]) -> list[Alternative]:
    seen: dict[tuple[Any, ...], Alternative] = {}
    for observed, env in alternatives:
        seen.setdefault((repr(observed), env.key()), (observed, env))
    return list(seen.values())


@dataclass
class PoolModel:
    """What the pool may return, env by env.

    Args:
        fns: the env factories.
        slices: the env indices of each worker (from ``worker_info()``).
        batch_size: the pool's batch size (what ``recv`` returns at most).
    """

    fns: list[Callable[[], Any]]
    slices: list[list[int]]
    batch_size: int
    # Per env, the states it may be in while no step of it is under way.
    twins: list[list[RefEnv]] = field(init=False)
    # The pending step_async: per env, its alternatives (None: no step pending).
    pending: dict[int, list[Alternative]] | None = None
    # Pool mode: per env sent and not yet received, its alternatives.
    in_flight: dict[int, list[Alternative]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.num_envs = len(self.fns)
        self.twins = [[RefEnv(fn)] for fn in self.fns]

    def _branch(self, i: int, run: Callable[[RefEnv], Any]) -> list[Alternative]:
        """Env ``i``'s alternatives for ``run``: what it returns and the state it leaves, from each twin."""
        alternatives = []
        for twin in self.twins[i]:
            env = twin.copy()
            alternatives.append((run(env), env))
        return _unique(alternatives)

    def observe(self, i: int, alternatives: list[Alternative], keep: Callable[[Any], bool]) -> bool:
        """Keep env ``i``'s states whose alternative returned what ``keep`` accepts; whether there was one."""
        matching = [env for observed, env in alternatives if keep(observed)]
        if matching:
            self.twins[i] = [env for _, env in _unique((None, env) for env in matching)]
        return bool(matching)

    # -- steps -----------------------------------------------------------------------------------------

    def step(self, i: int, action: int) -> list[Alternative]:
        """What env ``i`` may return for a step with ``action`` sent now."""
        return self._branch(i, lambda env: env.step(action))

    def under_way(self, i: int) -> list[Alternative]:
        """The alternatives of env ``i``'s step under way."""
        return self.pending[i] if self.pending is not None else self.in_flight[i]

    def finish(self, i: int, keep: Callable[[Outcome], bool]) -> bool:
        """Env ``i``'s step under way ended with an outcome ``keep`` accepts; whether the model allowed one."""
        alternatives = self.under_way(i)
        self.in_flight.pop(i, None)
        return self.observe(i, alternatives, keep)

    def kill(self, w: int) -> None:
        """Worker ``w`` was killed: its envs are replaced; a step under way finished before, or is redone."""
        for i in self.slices[w]:
            under_way = self.pending if self.pending is not None else self.in_flight
            if i not in under_way:
                self.twins[i] = [env for _, env in _unique((None, twin.replaced()) for twin in self.twins[i])]
                continue
            finished = [(outcome, env.replaced()) for outcome, env in under_way[i]]
            redone = []
            for _, env in under_way[i]:
                replacement = env.replaced()
                redone.append((replacement.step(0), replacement))  # a restart report applies no action
            under_way[i] = _unique(finished + redone)

    # -- resets and calls ----------------------------------------------------------------------------------

    def reset(
        self, seeds: list[int | None], options: dict[str, Any] | None, mask: list[bool] | None
    ) -> list[list[Alternative]]:
        """Per env, the ``(observation, info)`` it may show (a masked-out env: what it showed, no info)."""

        def outcome(i: int, env: RefEnv) -> tuple[tuple[int, ...], dict[str, Any]]:
            return env.reset(seeds[i], options) if mask is None or mask[i] else (env.shown, {})

        return [self._branch(i, functools.partial(outcome, i)) for i in range(self.num_envs)]

    def calls(self, method: Callable[[int, RefEnv], Any]) -> list[list[Alternative]]:
        """Per env ``i``, what ``method(i, env)`` may return (a replaced env is reset first if it never was)."""
        return [self._branch(i, functools.partial(method, i)) for i in range(self.num_envs)]
