"""Joining the agents' batches into one, and taking rows out of one: observations, flags and infos."""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces.spaces import Dict, Space, Tuple
from vecspaces.vector._async.observations import take_envs

__all__ = ["Rows", "assign", "join", "join_infos", "take_infos"]


def join(space: Space[Any], parts: list[Any]) -> Any:
    """One batch of the single ``space`` from consecutive batches of it, in order.

    Example:
        >>> from vecspaces.spaces import Box
        >>> join(Box(0, 1, (2,)), [np.zeros((1, 2)), np.ones((2, 2))]).shape
        (3, 2)
    """
    if isinstance(space, Dict):
        return {key: join(child, [part[key] for part in parts]) for key, child in space.items()}
    if isinstance(space, Tuple):
        return tuple(join(child, [part[i] for part in parts]) for i, child in enumerate(space))
    if isinstance(parts[0], np.ndarray):
        if len(parts) == 1:  # unpickled, so already the caller's own (unless Ray lent it read-only)
            return parts[0] if parts[0].flags.writeable else parts[0].copy()
        return np.concatenate(parts)
    # A tuple of per-env values: Text, OneOf, Sequence, Graph and custom spaces.
    return tuple(value for part in parts for value in part)


def assign(space: Space[Any], target: Any, value: Any) -> Any:
    """``value`` written into the arrays of the batch ``target`` (a batch of the single ``space``); returns it.

    Leaves that are tuples of per-env values cannot be written in place: the result holds ``value``'s.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> target = np.zeros(2, dtype=np.int64)
        >>> assign(Discrete(3), target, np.array([2, 1])) is target, target
        (True, array([2, 1]))
    """
    if isinstance(space, Dict):
        return {key: assign(child, target[key], value[key]) for key, child in space.items()}
    if isinstance(space, Tuple):
        return tuple(assign(child, target[i], value[i]) for i, child in enumerate(space))
    if isinstance(target, np.ndarray) and isinstance(value, np.ndarray) and target.shape == value.shape:
        target[...] = value
        return target
    return value


def join_infos(parts: list[tuple[int, dict[str, Any]]], num_envs: int) -> dict[str, Any]:
    """One batched info dict of ``num_envs`` envs from ``(first env, batched infos)`` parts.

    Example:
        >>> mask = np.array([True])
        >>> join_infos([(1, {"lives": np.array([3]), "_lives": mask})], 3)
        {'lives': array([0, 3, 0]), '_lives': array([False,  True, False])}
    """
    infos: dict[str, Any] = {}
    for first, part in parts:
        _place(infos, part, first, num_envs)
    return infos


def _place(infos: dict[str, Any], part: dict[str, Any], first: int, num_envs: int) -> None:
    for key, value in part.items():
        if key.startswith("_") and key[1:] in part:
            continue  # a mask, placed with its key
        if isinstance(value, dict):
            _place(infos.setdefault(key, {}), value, first, num_envs)
            count = None
        else:
            infos[key] = _put(infos.get(key), _as_column(value), first, num_envs)
            count = len(value)
        mask = infos.get("_" + key)
        if mask is None:
            mask = infos["_" + key] = np.zeros(num_envs, dtype=np.bool_)
        local_mask = part.get("_" + key)
        if local_mask is not None:
            mask[first : first + len(local_mask)] = local_mask
        elif count is not None:
            mask[first : first + count] = True


def _as_column(value: Any) -> npt.NDArray[Any]:
    if isinstance(value, np.ndarray):
        return value
    column = np.empty(len(value), dtype=object)
    column[:] = list(value)
    return column


def _put(target: npt.NDArray[Any] | None, values: npt.NDArray[Any], first: int, num_envs: int) -> npt.NDArray[Any]:
    """``values`` written at rows ``first ..`` of ``target`` (made, or widened, to hold them)."""
    if target is None:
        if values.dtype == object:
            target = np.full(num_envs, None, dtype=object)
        else:
            target = np.zeros((num_envs, *values.shape[1:]), dtype=values.dtype)
    elif target.dtype != values.dtype or target.shape[1:] != values.shape[1:]:
        target = _widened(target, values)
    if target.dtype == object and values.dtype != object:
        for row, value in enumerate(values):
            target[first + row] = value
    else:
        target[first : first + len(values)] = values
    return target


def _widened(target: npt.NDArray[Any], values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    if target.shape[1:] == values.shape[1:] and target.dtype != object and values.dtype != object:
        return target.astype(np.result_type(target.dtype, values.dtype))
    widened = np.full(len(target), None, dtype=object)
    for row, value in enumerate(target):
        widened[row] = value
    return widened


def take_infos(infos: dict[str, Any], index: slice | list[int]) -> dict[str, Any]:
    """The envs ``index`` of a batched info dict (the keys no env among them reported are dropped)."""
    taken: dict[str, Any] = {}
    for key, value in infos.items():
        if key.startswith("_") and key[1:] in infos:
            continue
        mask = infos.get("_" + key)
        if mask is not None and not mask[index].any():
            continue
        taken[key] = take_infos(value, index) if isinstance(value, dict) else value[index]
        if mask is not None:
            taken["_" + key] = mask[index]
    return taken


@dataclass
class Rows:
    """Some envs' step results, in the order of ``env_ids``."""

    observations: Any
    rewards: npt.NDArray[np.float64]
    terminations: npt.NDArray[np.bool_]
    truncations: npt.NDArray[np.bool_]
    infos: dict[str, Any]
    env_ids: list[int]

    def take(self, space: Space[Any], index: slice | list[int]) -> Rows:
        """The rows at positions ``index``."""
        return Rows(
            take_envs(space, self.observations, index),
            self.rewards[index],
            self.terminations[index],
            self.truncations[index],
            take_infos(self.infos, index),
            self.env_ids[index] if isinstance(index, slice) else [self.env_ids[i] for i in index],
        )

    @staticmethod
    def join(space: Space[Any], parts: list[Rows], in_env_order: bool = False) -> Rows:
        """The rows of ``parts`` one after the other, or sorted by env id with ``in_env_order``."""
        if len(parts) == 1:  # its observations still copied if they are read-only (a view of shared memory)
            joined = dataclasses.replace(parts[0], observations=join(space, [parts[0].observations]))
        else:
            env_ids = [i for part in parts for i in part.env_ids]
            infos: dict[str, Any] = {}
            if any(part.infos for part in parts):
                firsts = itertools.accumulate((len(part.env_ids) for part in parts[:-1]), initial=0)
                infos = join_infos(
                    [(first, part.infos) for first, part in zip(firsts, parts, strict=True)], len(env_ids)
                )
            joined = Rows(
                join(space, [part.observations for part in parts]),
                np.concatenate([part.rewards for part in parts]),
                np.concatenate([part.terminations for part in parts]),
                np.concatenate([part.truncations for part in parts]),
                infos,
                env_ids,
            )
        ids = joined.env_ids
        if in_env_order and ids != sorted(ids):
            joined = joined.take(space, sorted(range(len(joined.env_ids)), key=joined.env_ids.__getitem__))
        return joined
