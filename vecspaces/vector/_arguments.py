"""Validation of the arguments of ``reset`` and ``step``, shared by every backend.

Everything is checked before any sub-env is touched, so a bad call leaves the vector env as it was.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.batch import iterate
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces import Space

__all__ = ["actions_per_env", "seeds_per_env", "split_reset_mask"]


def seeds_per_env(seed: Any, num_envs: int) -> list[int | None]:
    """One seed per env: ``None`` for all, ``seed + i`` for an int, or a list of ``num_envs`` seeds.

    Example:
        >>> seeds_per_env(42, 3)
        [42, 43, 44]
    """
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return [int(seed) + index for index in range(num_envs)]
    if isinstance(seed, (list, tuple)):
        if len(seed) != num_envs:
            raise InvalidValueError(
                message("reset seed list has the wrong length", expected=f"{num_envs} seeds", got=show(seed))
            )
        return list(seed)
    raise InvalidTypeError(
        message(
            "reset seed has the wrong type",
            expected=f"None, an int or a list of {num_envs} seeds",
            got=show(seed),
        )
    )


def split_reset_mask(
    options: dict[str, Any] | None, num_envs: int
) -> tuple[npt.NDArray[np.bool_] | None, dict[str, Any] | None]:
    """Take ``"reset_mask"`` out of a copy of ``options`` (the caller's dict is left as it is) and check it.

    Returns:
        ``(mask or None, options without the mask)``.
    """
    if options is None or "reset_mask" not in options:
        return None, options
    options = dict(options)
    mask = options.pop("reset_mask")
    expected = f"a bool numpy array of shape ({num_envs},) with at least one True"
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        raise InvalidTypeError(message("options['reset_mask'] is not a bool array", expected=expected, got=show(mask)))
    if mask.shape != (num_envs,):
        raise InvalidValueError(message("options['reset_mask'] has the wrong shape", expected=expected, got=show(mask)))
    if not mask.any():
        raise InvalidValueError(message("options['reset_mask'] resets no env", expected=expected, got=show(mask)))
    return mask, options


def actions_per_env(action_space: Space[Any], actions: Any, num_envs: int) -> list[Any]:
    """Split a batch of actions into one action per env, checking there is exactly one per env."""
    shape = action_space.shape
    if shape is not None and isinstance(actions, np.ndarray) and actions.shape != shape:
        raise InvalidValueError(_bad_actions("actions has the wrong shape", action_space, actions, num_envs))
    try:
        split = list(iterate(action_space, actions))
    except (TypeError, ValueError) as error:
        raise InvalidValueError(_bad_actions("actions do not form a batch", action_space, actions, num_envs)) from error
    if len(split) != num_envs:
        raise InvalidValueError(
            message("actions has the wrong batch size", expected=f"{num_envs} actions", got=f"{len(split)} actions")
        )
    return split


def _bad_actions(problem: str, action_space: Space[Any], actions: Any, num_envs: int) -> str:
    # Built only on failure: the repr of a batched space is too slow for every step.
    return message(problem, expected=f"a batch of {num_envs} actions from {action_space!r}", got=show(actions))
