"""How an env's observation gets into shared memory: writers with a fast path for the common observations.

The checked write (:meth:`~vecspaces.vector.utils.shared_batch.SharedBatch.write`) serves every space: it
runs the layout's write program, one encoder call per node, and converts or refuses what does not fit. A
worker writes every env's observation on every step, and most envs return exactly what the slots hold (arrays
of the stored shapes and dtypes, the stored numpy scalars). So for a single array, and for a Dict or Tuple of
arrays, the writer first tests the value cheaply and copies it as it is; anything the test is unsure of goes
through the checked write. For any value, a writer leaves the same bytes in shared memory and raises the same
error as the checked write (``tests/vector/test_worker_writers.py`` compares them).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from vecspaces._ops.memory_nodes import ArrayLeaf, DictNode, TupleNode
from vecspaces.vector.utils.shared_batch import SharedBatch
from vecspaces.vector.utils.shared_layout import is_single_array

__all__ = ["Writer", "observation_writer", "observation_writers"]

# Writes one env's observation (env index, observation); returns the values that must travel by pipe instead
# (the variable-size leaves), if any.
Writer = Callable[[int, Any], "list[Any] | None"]


def observation_writers(observations: tuple[SharedBatch, ...] | None) -> list[Writer]:
    """Per observation buffer, a function writing one env's observation there (see :func:`observation_writer`).

    With no buffers (observations travel by pipe), one writer that sends the whole observation.
    """
    if observations is None:
        return [lambda index, obs: [obs]]
    return [observation_writer(batch) for batch in observations]


def observation_writer(observations: SharedBatch) -> Writer:
    """A function writing one env's observation; it returns what must travel by pipe instead, if anything."""
    flat = _flat_container_writer(observations)
    if flat is not None:
        return flat
    write = observations.write
    layout = observations.layout
    if is_single_array(layout):
        slot = layout.slots[0]
        rows = [views[0] for views in observations.env_views]
        shape, dtype = slot.shape, slot.dtype

        def write_array(index: int, obs: Any) -> None:
            # The common case costs one copy; anything else goes through the checked write for its errors.
            if type(obs) is np.ndarray and obs.shape == shape and obs.dtype == dtype:
                rows[index][...] = obs
            else:
                write(index, obs)

        return write_array

    def write_any(index: int, obs: Any) -> list[Any] | None:
        variable = write(index, obs)
        return list(variable) if variable else None

    return write_any


def _flat_container_writer(observations: SharedBatch) -> Writer | None:
    """For a Dict or Tuple of arrays: a writer that tests every leaf cheaply, then copies, else None.

    A value that is not exactly of the stored shapes and dtypes goes through the checked write, which
    converts what it can and raises what it cannot; so does anything the cheap tests are unsure of.
    """
    layout = observations.layout
    root, leaves = layout.nodes[0], layout.nodes[1:]
    if not isinstance(root, (DictNode, TupleNode)) or len(leaves) < 2:
        return None
    arrays = [leaf for leaf in leaves if isinstance(leaf, ArrayLeaf) and len(leaf.path) == 1]
    if len(arrays) != len(leaves):
        return None
    container = dict if isinstance(root, DictNode) else tuple
    count = len(arrays)
    # With two leaves or more, itemgetter gives a tuple of the values, in the order of the slots.
    get = operator.itemgetter(*(leaf.path[0] for leaf in arrays))
    # Per leaf, what an env almost always returns: (type, shape, dtype) of an array of the slot's shape and
    # dtype, or of the slot's own numpy scalar; and the test of any other value.
    tests = [
        (np.ndarray if leaf.shape else leaf.dtype.type, leaf.shape, leaf.dtype, _other_value_test(leaf))
        for leaf in arrays
    ]
    env_rows, write = observations.env_views, observations.write

    # The loops zip without strict=True: the lengths match by construction, and the check costs a measurable
    # share of this function, which runs for every env on every step.
    def write_flat(index: int, obs: Any) -> None:
        if type(obs) is container and len(obs) == count:
            try:
                values = get(obs)
            except (KeyError, IndexError):
                pass
            else:
                for value, (kind, shape, dtype, other_fits) in zip(values, tests):  # noqa: B905
                    exact = type(value) is kind and value.shape == shape and value.dtype == dtype
                    if not exact and not other_fits(value):
                        break
                else:  # every leaf fits; copying only now leaves the slots untouched when one does not
                    for row, value in zip(env_rows[index], values):  # noqa: B905
                        row[...] = value
                    return
        write(index, obs)

    return write_flat


def _other_value_test(leaf: ArrayLeaf) -> Callable[[Any], bool]:
    """A test that a value not exactly of the leaf's stored type, shape and dtype can still be copied as it is."""
    if leaf.shape:
        return _never  # an array of another shape, dtype or class goes through the checked write
    # The leaf's own numpy scalar (whatever the byte order of the slot); Python numbers and 0-d arrays that fit.
    scalar, check = leaf.dtype.type, _scalar_check(leaf.dtype)
    return lambda value: type(value) is scalar or check(value)


def _never(value: Any) -> bool:
    return False


def _scalar_check(dtype: np.dtype[Any]) -> Callable[[Any], bool]:
    """A cheap test that a value can be copied into a scalar slot of ``dtype`` as it is (no conversion, no overflow).

    For values other than ``dtype``'s own numpy scalar, which :func:`_other_value_test` accepts before calling it.
    """
    ndarray = np.ndarray
    python_type = (
        {"b": bool, "i": int, "f": float}.get(dtype.kind) if dtype.itemsize == 8 or dtype.kind == "b" else None
    )

    def check_scalar(value: Any) -> bool:
        kind = type(value)
        if kind is ndarray:
            return value.shape == () and value.dtype == dtype
        # Python numbers only where the slot holds every value of their type (an int must fit in int64).
        return kind is python_type and (kind is not int or -(2**63) <= value < 2**63)

    return check_scalar
