"""Validation of the arguments of ``reset`` and ``step``, shared by every backend.

Everything is checked before any sub-env is touched, so a bad call leaves the vector env as it was.

A batch of actions may be any array-like that converts to the batched action space, as in Gymnasium: lists,
tuples, numpy scalars, arrays of another dtype, any other iterable of per-env actions (a generator, a map
object, a dict view: Gymnasium iterates them), and for a Dict or Tuple action space a dict or tuple of those.
:func:`as_action_batch` converts it once, before anything is sent, to arrays of the space's dtypes. The
conversion refuses values the cast would change (a fraction or an out-of-range integer for an integer dtype,
anything but 0 and 1 for bool; see ``_casting``), so a sub-env never receives a wrapped or truncated action;
values out of the space's bounds but representable in its dtype pass, and the env decides. Float actions for a
float Box keep their own float dtype (:data:`CARRIED_FLOATS`): Gymnasium hands each env its row of the caller's
array, and an env computing with float64 actions gives other results than with the same actions as float32.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.batch import iterate
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces import Box, Dict, MultiBinary, MultiDiscrete, Space, Tuple
from vecspaces.vector._casting import cast_exactly, cast_objects, lost_integer_digits

__all__ = [
    "CARRIED_FLOATS",
    "actions_per_env",
    "as_action_batch",
    "env_factories",
    "seeds_per_env",
    "split_action_batch",
    "split_reset_mask",
]

# The float dtypes a float Box's actions keep (rather than being cast to the Box's dtype): a float Box's own
# dtype is one of them, and float64 holds the values of each exactly (the pool stores them so).
CARRIED_FLOATS: tuple[np.dtype[Any], ...] = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.float16))

# The batched spaces whose batch is one array: a batched Box, Discrete (a MultiDiscrete), MultiBinary or
# MultiDiscrete (both Boxes once batched); MultiBinary itself is accepted as a batch, as by iterate.
_ARRAY_SPACES = (Box, MultiDiscrete, MultiBinary)


def env_factories(env_fns: Iterable[Callable[[], Any]]) -> list[Callable[[], Any]]:
    """A vector env's ``env_fns`` as a list, checked: a non-empty list of callables.

    Raises:
        InvalidTypeError: ``env_fns`` is not iterable, is empty, or holds something that is not callable (an env
            made already, most often).

    Example:
        >>> env_factories([])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        vecspaces.error.InvalidTypeError: env_fns is invalid, expected a non-empty list of callables, got []...
    """
    expected = "a non-empty list of callables"
    factories = list(env_fns) if isinstance(env_fns, Iterable) else []
    if not factories:
        fix = "pass a list: [env_fn] * n" if callable(env_fns) else ""
        raise InvalidTypeError(message("env_fns is invalid", expected=expected, got=show(env_fns), fix=fix))
    for index, fn in enumerate(factories):
        if callable(fn):
            continue
        fix = ""
        if hasattr(fn, "step") and hasattr(fn, "reset"):  # an env made already
            fix = "pass functions that make the envs, e.g. lambda: gymnasium.make('CartPole-v1'), not envs"
        raise InvalidTypeError(
            message("env_fns is invalid", expected=expected, got=show(fn), at=f"env_fns[{index}]", fix=fix)
        )
    return factories


def seeds_per_env(seed: Any, num_envs: int) -> list[int | None]:
    """One seed per env: ``None`` for all, ``seed + i`` for an int, or a sequence of ``num_envs`` seeds.

    A sequence may be a list, a tuple or a numpy array; each seed in it is None or an int >= 0, numpy integers
    included, and comes back as a Python int (Gymnasium's seeding refuses numpy integers).

    Raises:
        InvalidTypeError: ``seed`` or a seed in it is of another type (a bool, a float, a string...).
        InvalidValueError: a seed is negative, or the sequence does not hold ``num_envs`` seeds.

    Example:
        >>> seeds_per_env(42, 3)
        [42, 43, 44]
        >>> seeds_per_env(np.array([7, 8]), 2)
        [7, 8]
    """
    if seed is None:
        return [None] * num_envs
    if _is_int(seed):
        first = _checked_seed(seed, "")
        return [first + index for index in range(num_envs)]
    if (isinstance(seed, np.ndarray) and seed.ndim == 1) or (
        isinstance(seed, Sequence) and not isinstance(seed, (str, bytes))
    ):
        if len(seed) != num_envs:
            raise InvalidValueError(
                message("reset seed list has the wrong length", expected=f"{num_envs} seeds", got=show(seed))
            )
        return [None if item is None else _checked_seed(item, f"seed[{index}]") for index, item in enumerate(seed)]
    raise InvalidTypeError(
        message(
            "reset seed has the wrong type",
            expected=f"None, an int or a list of {num_envs} seeds",
            got=show(seed),
        )
    )


def _is_int(value: Any) -> bool:
    # bool is an int to Python, but True as a seed is almost surely a mistake, and Gymnasium refuses it.
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _checked_seed(seed: Any, at: str) -> int:
    expected = "None or an int >= 0"
    if not _is_int(seed):
        raise InvalidTypeError(message("reset seed has the wrong type", expected=expected, got=show(seed), at=at))
    if seed < 0:
        raise InvalidValueError(message("reset seed is negative", expected=expected, got=show(seed), at=at))
    return int(seed)


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
    """Split a batch of actions into one action per env, checking there is exactly one per env.

    The batch is first converted to the batched action space by :func:`as_action_batch`, so any array-like
    that converts exactly is accepted.

    Args:
        action_space: the batched action space, as made by ``batch_space(single_space, num_envs)``.
        actions: the batch of actions.
        num_envs: the number of envs the batch is for.

    Returns:
        The action of each env.

    Raises:
        InvalidValueError: the actions do not form a batch of ``num_envs`` actions of the space, or a value
            would change when cast to the space's dtype.
        InvalidTypeError: an array leaf holds values of a non-numeric dtype (strings, objects, complex), or
            ``actions`` is a single number instead of a batch.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> from vecspaces.vector.utils import batch_space
        >>> actions = actions_per_env(batch_space(Discrete(3), 2), [2, np.int8(0)], 2)
        >>> [int(action) for action in actions], actions[0].dtype
        ([2, 0], dtype('int64'))
    """
    return split_action_batch(action_space, as_action_batch(action_space, actions), num_envs)


def split_action_batch(action_space: Space[Any], batch: Any, num_envs: int) -> list[Any]:
    """:func:`actions_per_env` for a batch :func:`as_action_batch` converted already.

    Raises:
        InvalidValueError: the batch does not hold ``num_envs`` actions.
    """
    try:
        split = list(iterate(action_space, batch))
    except (TypeError, ValueError) as error:
        raise InvalidValueError(_bad_actions("actions do not form a batch", action_space, batch, num_envs)) from error
    if len(split) != num_envs:
        raise InvalidValueError(
            message("actions has the wrong batch size", expected=f"{num_envs} actions", got=f"{len(split)} actions")
        )
    return split


def as_action_batch(action_space: Space[Any], actions: Any) -> Any:
    """Convert a batch of actions to a value of the batched ``action_space``, checking every cast is exact.

    Array leaves (a batched Box, Discrete, MultiBinary or MultiDiscrete) become arrays of the leaf's shape and
    dtype: lists, tuples and numpy scalars through ``np.asarray``, arrays of another dtype through
    :func:`cast_exactly`, except that float values for a float Box keep their float dtype (one of
    :data:`CARRIED_FLOATS`; a list of Python floats gives float64), as Gymnasium hands them to the envs. A
    batched Dict takes a mapping with the same keys, a batched Tuple a tuple or list with one entry per child,
    converted child by child. The batch of a space with no array form (Text, Sequence, Graph, OneOf and custom
    spaces, a Tuple of per-env copies) is left as the sequence of per-env values it is. An array of the leaf's
    exact type, shape and dtype is returned as it is, at the cost of one check.

    Args:
        action_space: the batched action space.
        actions: the batch of actions, in any form that converts.

    Returns:
        The batch, with numpy arrays of the space's dtypes at its array leaves.

    Raises:
        InvalidValueError: a leaf is ragged or has the wrong shape or batch size, a key is missing or extra,
            a Tuple has the wrong number of entries, or a value would change when cast.
        InvalidTypeError: a leaf holds values of a non-numeric dtype, or is a single number instead of a batch.

    Example:
        >>> from vecspaces.spaces import Box, Dict, Discrete
        >>> from vecspaces.vector.utils import batch_space
        >>> space = batch_space(Dict(gear=Discrete(3), force=Box(-1, 1, (2,))), 2)
        >>> batch = as_action_batch(space, {"gear": [2, 0], "force": [[0.5, 0], (0, 1)]})
        >>> batch["gear"], batch["force"].dtype
        (array([2, 0]), dtype('float64'))
    """
    if type(actions) is np.ndarray and actions.dtype == action_space.dtype and actions.shape == action_space.shape:
        return actions  # the hot path: already the batch, nothing to convert
    return _convert(action_space, actions, "actions")


def _convert(space: Space[Any], value: Any, path: str) -> Any:
    if isinstance(space, Dict):
        return _as_dict(space, value, path)
    if isinstance(space, _ARRAY_SPACES):
        # numpy would make one object of an iterator or a view; Gymnasium iterates it, one action per env.
        return _as_array(space, list(value) if _only_iterable(value) else value, path)
    if isinstance(space, Tuple):
        if all(isinstance(child, (*_ARRAY_SPACES, Dict, Tuple)) for child in space.spaces):
            return _as_tuple(space, value, path)
        # A Tuple of per-env copies (Text, Sequence, Graph, OneOf, custom): the values are the per-env actions,
        # and a tuple of them is the batched space's own form.
        if type(value) is list or (isinstance(value, np.ndarray) and value.ndim >= 1) or _only_iterable(value):
            return tuple(value)
        return value
    return value  # a kind registered with a batch of its own: its iterate knows what to accept


def _as_array(space: Space[Any], value: Any, path: str) -> npt.NDArray[Any]:
    shape = space.shape
    dtype = space.dtype
    assert shape is not None and dtype is not None  # every array space has both
    if _is_single_value(value):
        raise InvalidTypeError(_bad_leaf("actions is a single value, not a batch", space, value, path))
    if isinstance(value, np.ndarray):
        if value.shape != shape:
            raise InvalidValueError(_bad_leaf("actions has the wrong shape", space, value, path))
        if type(value) is np.ndarray and (value.dtype == dtype or _carried(value.dtype, dtype)):
            return value
        return cast_exactly(np.asarray(value), dtype, path)
    try:
        array = np.asarray(value)
    except (ValueError, TypeError, OverflowError) as error:  # ragged lists, or a value numpy cannot take
        raise InvalidValueError(_bad_leaf("actions do not form a batch", space, value, path)) from error
    if array.shape != shape:
        if array.ndim == len(shape) and array.shape[1:] == shape[1:]:
            raise InvalidValueError(
                message(
                    "actions has the wrong batch size",
                    expected=f"{shape[0]} actions",
                    got=f"{array.shape[0]} actions",
                    at="" if path == "actions" else path,
                )
            )
        raise InvalidValueError(_bad_leaf("actions has the wrong shape", space, value, path))
    if array.dtype == dtype or _carried(array.dtype, dtype):
        return array
    if array.dtype.kind == "O":
        return cast_objects(array, dtype, path)
    if array.dtype.kind == "f" and dtype.kind in "iu":
        objects = lost_integer_digits(array, value)
        if objects is not None:
            return cast_objects(objects, dtype, path)
    return cast_exactly(array, dtype, path)


def _carried(given: np.dtype[Any], dtype: np.dtype[Any]) -> bool:
    """Whether values of dtype ``given`` go to the envs as they are for a leaf of ``dtype``: floats for floats."""
    return given in CARRIED_FLOATS and dtype in CARRIED_FLOATS


def _is_single_value(value: Any) -> bool:
    """Whether ``value`` is one number where a batch is due: a TypeError then, as from Gymnasium's ``iterate``."""
    return isinstance(value, (int, float, complex, np.generic)) or (isinstance(value, np.ndarray) and not value.ndim)


def _only_iterable(value: Any) -> bool:
    """Whether ``value`` can be iterated but neither indexed nor read as an array (a generator, a set, a dict view).

    Example:
        >>> _only_iterable(action for action in [0, 1]), _only_iterable([0, 1]), _only_iterable({0: 1}.values())
        (True, False, True)
    """
    kind = type(value)
    if kind is list or kind is tuple or hasattr(kind, "__getitem__"):
        return False
    return isinstance(value, Iterable) and not hasattr(value, "__array__") and not hasattr(value, "__array_interface__")


def _as_dict(space: Dict, value: Any, path: str) -> dict[str, Any]:
    spaces = space.spaces
    if type(value) is not dict and not isinstance(value, Mapping):  # a dict skips the slower ABC check
        raise InvalidValueError(_bad_leaf("actions do not form a batch", space, value, path))
    if value.keys() != spaces.keys():
        expected = f"a dict with exactly the keys {list(spaces)}"
        got = f"the keys {list(value)}"
        missing = [key for key in spaces if key not in value]
        if missing:
            raise InvalidValueError(
                message("actions is missing a key", expected=expected, got=got, at=f"{path}[{missing[0]!r}]")
            )
        extra = next(key for key in value if key not in spaces)
        raise InvalidValueError(
            message("actions has a key the action space has not", expected=expected, got=got, at=f"{path}[{extra!r}]")
        )
    converted = {}
    for key, child in spaces.items():
        part = value[key]
        if type(part) is np.ndarray and part.dtype == child.dtype and part.shape == child.shape:
            converted[key] = part  # already a batch of the child: the common case, kept cheap
        else:
            converted[key] = _convert(child, part, f"{path}[{key!r}]")
    return converted


def _as_tuple(space: Tuple, value: Any, path: str) -> tuple[Any, ...]:
    if not isinstance(value, (tuple, list)):
        raise InvalidValueError(_bad_leaf("actions do not form a batch", space, value, path))
    if len(value) != len(space.spaces):
        raise InvalidValueError(
            message(
                "actions has the wrong number of entries for a Tuple",
                expected=f"a tuple or list of {len(space.spaces)} batches, one per child space",
                got=f"{len(value)} {'entry' if len(value) == 1 else 'entries'}",
                at=path,
            )
        )
    children = enumerate(zip(space.spaces, value, strict=True))
    return tuple([_convert(child, part, f"{path}[{index}]") for index, (child, part) in children])


def _bad_leaf(problem: str, space: Space[Any], value: Any, path: str) -> str:
    # Built only on failure, as _bad_actions.
    return message(
        problem,
        expected=f"a batch of {_batch_size(space)} actions from {space!r}",
        got=show(value),
        at="" if path == "actions" else path,
    )


def _batch_size(space: Space[Any]) -> int | str:
    """The number of envs a batched space is for, found from its first leaf ("n" if it has none)."""
    if space.shape:
        return space.shape[0]
    if isinstance(space, Tuple) and not all(isinstance(child, (*_ARRAY_SPACES, Dict, Tuple)) for child in space):
        return len(space.spaces)
    children = (
        list(space.spaces.values())
        if isinstance(space, Dict)
        else list(space.spaces)
        if isinstance(space, Tuple)
        else []
    )
    return _batch_size(children[0]) if children else "n"


def _bad_actions(problem: str, action_space: Space[Any], actions: Any, num_envs: int) -> str:
    # Built only on failure: the repr of a batched space is too slow for every step.
    return message(problem, expected=f"a batch of {num_envs} actions from {action_space!r}", got=show(actions))
