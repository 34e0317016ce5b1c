"""``concatenate`` of Dict and Tuple: every child's column is checked before any child writes.

Part of the container row of the table (``vecspaces._kernels.container``), in a module of its own because it
is the one hot path of the row with two phases and a fast path. A failure leaves ``out`` as it was: each
child's kernel is *prepared* (its check phase, ``vecspaces._ops.batch.register_concatenate``) before any
child's *write* runs (see :func:`_check_children`). The most common case, a Dict of array children given plain
dicts, takes one pass with no per-item rows (:func:`_concatenate_arrays_dict`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from operator import itemgetter
from typing import Any

import numpy as np

from vecspaces._ops.arguments import as_items
from vecspaces._ops.batch import concatenate, items_fit, preparers, set_prepare, stack_kernels
from vecspaces._ops.dispatch import lookup
from vecspaces.error import Error
from vecspaces.spaces._container import Container, relocate
from vecspaces.spaces.dict import Dict
from vecspaces.spaces.tuple import Tuple

__all__: list[str] = []

# The children's kernels, found through the dispatcher's cache: faster than calling the dispatcher.
_concatenate_kernel = lookup(concatenate)
_preparers = preparers()
_stack_kernels = stack_kernels()
ndarray = np.ndarray


@concatenate.register(Dict)
@concatenate.register(Tuple)
def _concatenate_container(space: Container[Any], items: Iterable[Any], out: Any) -> Any:
    if type(items) is not list and type(items) is not tuple:
        items = as_items(items)
    if type(out) is dict:
        batch = _concatenate_arrays_dict(space, items, out)
        if batch is not None:
            return batch
    return _write_all(space, *_check_children(space, items, out))  # _prepare_container(...)(), with less overhead


# C901: one pass with every check inline is the point (the per-step batch of a Dict observation); the general
# path, split into small functions, is what it falls back to.
def _concatenate_arrays_dict(  # noqa: C901
    space: Container[Any], items: Sequence[Any], out: dict[Any, Any]
) -> Any:
    """The most common case in one pass, or None: a Dict of array children, plain dicts, no conversion needed.

    Every child's column is checked (as in :func:`_check_children`) before any is written. Returns None,
    having written nothing, whenever anything differs from that case; the general path then explains.
    """
    children = space.spaces
    count = len(items)
    if type(children) is not dict or len(out) != len(children):
        return None
    size = len(children)
    for item in items:
        if type(item) is not dict or len(item) != size:
            return None
    rows: Rows = []
    first: tuple[Any, list[Any]] | None = None  # the child written first, whose items' shapes numpy checks
    batch: dict[Any, Any] = {}
    try:
        for key, child in children.items():
            child_out = out[key]
            shape = child._shape
            if (
                _concatenate_kernel(child.__class__) not in _stack_kernels
                or type(child_out) is not ndarray
                or shape is None
                or child_out.shape != (count, *shape)
                or not child_out.flags.writeable
            ):
                return None
            column = [item[key] for item in items]
            dtype = child_out.dtype
            if shape and first is None:
                # numpy refuses items of unequal shapes before it writes anything, so for the child written
                # first the shape of the first item is enough: if numpy refuses, nothing has been written yet.
                for value in column:
                    if value.__class__ is not ndarray or value.dtype is not dtype:
                        return None
                if column and column[0].shape != shape:
                    return None
                first = (child_out, column)
            else:
                if not items_fit(column, dtype, shape):
                    return None
                rows.append((child_out, column))
            batch[key] = child_out
    except KeyError:  # a dict with other keys
        return None
    if first is not None and first[1]:
        try:
            first[0][...] = first[1]
        except ValueError:  # items of unequal shapes; nothing is written yet, the general path names the item
            return None
    for child_out, values in rows:
        if values:
            child_out[...] = values
    return batch


def _prepare_container(space: Container[Any], items: Sequence[Any], out: Any) -> Callable[[], Any]:
    """The check phase of concatenate: every child's column is checked before any child writes.

    The write returned runs the children's writes, which cannot fail, and builds the container of their results.
    """
    return partial(_write_all, space, *_check_children(space, items, out))


Rows = list[tuple[np.ndarray[Any, Any], Sequence[Any]]]


def _check_children(space: Container[Any], items: Sequence[Any], out: Any) -> tuple[Rows, list[Any]]:
    """Check every child's column of ``items``; return what the write phase does for each child.

    Each child's kernel is prepared (its checks run, its write is kept for later). Array children whose items
    need no conversion (checked here with items_fit) are returned as ``(out, column)`` rows to assign. A
    child whose kernel has no check phase (one registered directly for a custom space) runs as a whole after
    every other child has been checked.

    Returns:
        The rows to assign, and per child its out (a row), its write, or a holder of its result.
    """
    columns, outs = _columns(space, items, out)
    children = space.children()
    count = len(items)
    rows: Rows = []  # (out, column) of the fast array children
    writes: list[Any] = []  # per child: its out (fast), its write, or None (no check phase)
    unprepared: list[int] = []
    index = 0
    try:
        for index, child in enumerate(children):
            kernel = _concatenate_kernel(child.__class__)
            column, child_out = columns[index], outs[index]
            # The common case: an array child whose items are arrays (or numpy scalars) of exactly out's dtype
            # and the child's shape. Every item is checked: the write must not fail.
            if kernel in _stack_kernels and type(child_out) is ndarray and child_out.flags.writeable:
                shape, dtype = child._shape, child_out.dtype
                if shape is not None and child_out.shape == (count, *shape) and items_fit(column, dtype, shape):
                    rows.append((child_out, column))
                    writes.append(child_out)
                    continue
            prepare = _preparers.get(kernel)
            if prepare is None:
                unprepared.append(index)
                writes.append(None)
            else:
                writes.append(prepare(child, column, child_out))
        for index in unprepared:
            child = children[index]
            writes[index] = _Done(_concatenate_kernel(child.__class__)(child, columns[index], outs[index]))
    except Error as error:
        raise relocate(error, space.path_segment(index), "space") from None
    return rows, writes


class _Done:
    """The write of a child that has run already: it gives the child's result."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self) -> Any:
        return self.value


def _write_all(space: Container[Any], rows: Rows, writes: list[Any]) -> Any:
    for child_out, column in rows:
        if column:
            child_out[...] = column
    return space.pack([write if type(write) is np.ndarray else write() for write in writes])


set_prepare(_concatenate_container, _prepare_container)


def _columns(space: Container[Any], items: Sequence[Any], out: Any) -> tuple[Sequence[Any], Sequence[Any]]:
    """Each child's column of items (its value in every item) and its part of ``out``, in the space's order.

    The fast path, when ``out`` and every item are a plain dict (or tuple) of the space's keys, builds no
    row per item; otherwise every item is unpacked, and one that is not a value of the container is named.
    """
    children = space.spaces
    count = len(children)
    kind = dict if isinstance(space, Dict) else tuple
    plain = type(out) is kind and len(out) == count
    if plain:
        for item in items:
            if type(item) is not kind or len(item) != count:
                plain = False
                break
    if plain:
        if kind is tuple:
            return (list(zip(*items, strict=True)) if items else [()] * count), out
        try:
            if count > 1:  # the items' values, key by key, taken in C by itemgetter and zip
                get = itemgetter(*children)
                return (list(zip(*map(get, items), strict=True)) if items else [()] * count), get(out)
            return [[item[key] for item in items] for key in children], [out[key] for key in children]
        except KeyError:  # a dict with other keys: the checked path below names them
            pass
    rows = [space.unpack(item, f"items[{index}]") for index, item in enumerate(items)]
    columns = list(zip(*rows, strict=True)) if rows else [()] * count
    return columns, space.unpack(out, "out")
