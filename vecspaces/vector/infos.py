"""Batching of per-env info dicts into one dict of arrays with ``_key`` masks (Gymnasium's format).

For every key an env reports, the batched info holds an array of length ``num_envs`` and a bool mask
``"_" + key`` saying which envs reported it. Nested dicts are batched recursively. Numbers and bools go into
numeric arrays (zeros where absent), numpy arrays into a stacked array, ``final_obs`` and anything else into
an object array (None where absent).

Unlike Gymnasium, an array's dtype is widened when a later env reports a value that does not fit (an int
first and 2.5 later stores 2.5, not 2), numpy bools are stored in a bool array, not an object array, and a key
some envs report as a dict and others as something else becomes an object array of each env's own value
(Gymnasium raises ``AttributeError`` or files the number under the nested dict).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["add_info"]

_PYTHON_SCALARS = (bool, int, float)


def add_info(infos: dict[str, Any], info: dict[str, Any], env_index: int, num_envs: int) -> dict[str, Any]:
    """Add one env's ``info`` to the batched ``infos`` (in place) and return ``infos``.

    Args:
        infos: the batched infos gathered so far (a new ``{}`` at the start of each step).
        info: the info dict returned by env ``env_index``.
        env_index: which env reported ``info``.
        num_envs: the batch size.

    Returns:
        ``infos``, updated.

    Example:
        >>> infos = add_info({}, {"lives": 3}, 0, num_envs=2)
        >>> infos = add_info(infos, {"lives": 2.5}, 1, num_envs=2)
        >>> infos
        {'lives': array([3. , 2.5]), '_lives': array([ True,  True])}
    """
    for key, value in info.items():
        if key == "final_obs":
            array = infos.get(key)
            if array is None:
                array = np.full(num_envs, None, dtype=object)
            array[env_index] = value
        elif key in infos and isinstance(value, dict) != isinstance(infos[key], dict):
            array = _per_env_objects(infos[key], infos["_" + key])
            array[env_index] = value
        elif isinstance(value, dict):
            array = add_info(infos.get(key, {}), value, env_index, num_envs)
        else:
            array = _store(infos.get(key), value, env_index, num_envs)
        mask = infos.get("_" + key)
        if mask is None:
            mask = np.zeros(num_envs, dtype=np.bool_)
        mask[env_index] = True
        infos[key] = array
        infos["_" + key] = mask
    return infos


def _store(array: Any, value: Any, env_index: int, num_envs: int) -> Any:
    """Put ``value`` at ``env_index`` of ``array``, creating or widening the array as needed."""
    if array is None:
        array = _new_array(value, num_envs)
    elif array.dtype != object and not _fits(value, array):
        array = _widen(array, value)
    array[env_index] = value
    return array


def _per_env_objects(batched: Any, mask: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """An object array of each env's value (None where absent), from a batched dict or array."""
    if isinstance(batched, np.ndarray) and batched.dtype == object:
        return batched
    objects = np.full(mask.shape[0], None, dtype=object)
    for index in np.flatnonzero(mask).tolist():
        objects[index] = _env_dict(batched, index) if isinstance(batched, dict) else batched[index]
    return objects


def _env_dict(batched: dict[str, Any], env_index: int) -> dict[str, Any]:
    """The info dict env ``env_index`` reported, rebuilt from a batched (nested) dict."""
    return {
        key: _env_dict(value, env_index) if isinstance(value, dict) else value[env_index]
        for key, value in batched.items()
        if "_" + key in batched and batched["_" + key][env_index]
    }


def _new_array(value: Any, num_envs: int) -> np.ndarray[Any, Any]:
    if isinstance(value, (*_PYTHON_SCALARS, np.number, np.bool_)):
        return np.zeros(num_envs, dtype=np.asarray(value).dtype)
    if isinstance(value, np.ndarray):
        return np.zeros((num_envs, *value.shape), dtype=value.dtype)
    return np.full(num_envs, None, dtype=object)


def _fits(value: Any, array: np.ndarray[Any, Any]) -> bool:
    if array.ndim == 1:
        if not isinstance(value, (*_PYTHON_SCALARS, np.number, np.bool_)):
            return False
        return np.can_cast(
            np.min_scalar_type(value) if isinstance(value, int) else np.asarray(value).dtype, array.dtype
        )
    return isinstance(value, np.ndarray) and value.shape == array.shape[1:] and np.can_cast(value.dtype, array.dtype)


def _widen(array: np.ndarray[Any, Any], value: Any) -> np.ndarray[Any, Any]:
    """A copy of ``array`` in a dtype that also holds ``value``, or an object array when none does."""
    try:
        candidate = np.asarray(value)
        if candidate.shape == array.shape[1:] and candidate.dtype.kind in "biufc":
            return array.astype(np.result_type(array.dtype, candidate.dtype))
    except (TypeError, ValueError):
        pass
    widened = np.full(array.shape[0], None, dtype=object)
    for index in range(array.shape[0]):
        widened[index] = array[index]
    return widened
