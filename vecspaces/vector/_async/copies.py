"""Copies of values read from shared memory, which later commands overwrite: used by workers and main process."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

__all__ = ["copied"]

# Values that ``copied`` can hand back as they are.
_IMMUTABLE = (str, bytes, int, float, bool, complex, np.generic, type(None))


def copied(value: Any) -> Any:
    """A copy of a value read from shared memory: its arrays copied, its dicts and tuples rebuilt.

    Example:
        >>> view = np.zeros(2)
        >>> value = copied({"a": view, "b": (view, 3)})
        >>> value["a"] is view, value["b"][0] is view, value["b"][1]
        (False, False, 3)
    """
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {key: copied(item) for key, item in value.items()}
    if type(value) is tuple:
        return tuple(copied(item) for item in value)
    if isinstance(value, _IMMUTABLE):
        return value
    # A custom space's value (an object the pool hands back again for an env a masked reset skips).
    return copy.deepcopy(value)
