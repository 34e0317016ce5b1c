"""Dict and Tuple: every operation, written once over the container protocol of ``vecspaces.spaces._container``.

Flat layout. When every child is flattenable, a container flattens to one 1-D array: its children's flat
vectors concatenated in the space's key order (a Dict's stored key order, a Tuple's positions), in numpy's
result type of the children's flat dtypes (float32 and int64 give float64). An empty container flattens to an
empty bool array: bool is the identity of numpy's type promotion, so an empty child never changes its parent's
flat dtype. When a child is a Sequence or a Graph (anywhere inside), the container flattens to a container of
the same kind holding each child's flattened value, and ``flatdim`` raises NotFlattenableError naming it.

Batched type. A container of the same kind and keys holding each child's batched space (``batch_space``,
``batch_differing_spaces``), batched value (``concatenate``, ``create_empty_array``). ``concatenate`` checks
every child's column before any child writes into its part of ``out``, so a failure leaves ``out`` as it was
(``vecspaces._kernels.container_concatenate``). ``iterate`` yields one dict per env for a Dict and one tuple
per env for a Tuple, with one exception for Tuples (see :func:`_iterate_tuple`): a Tuple whose direct children
have no ``iterate`` of their own is the batch of per-env copies that Text, Sequence, Graph, OneOf and custom spaces
batch to, and its items are the values.

Shared memory: a :class:`~vecspaces._ops.memory_nodes.DictNode` /
:class:`~vecspaces._ops.memory_nodes.TupleNode`, then each child's nodes in the space's order, each path
extended by the child's key or position.

Gymnasium: converted child by child, in the space's order (and a Dict's ``sort_keys``).

Every error about a part of a value names its path, e.g. ``items[3]['camera']: ...``, and every error about a
child space names the child's path, e.g. ``space['camera'][1]: flatdim has no implementation ...`` for a
custom space with nothing registered, at any depth (see :func:`_each_child`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from copy import deepcopy
from inspect import signature
from operator import is_
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.arguments import check_batch_size
from vecspaces._ops.batch import (
    batch_differing_spaces,
    batch_space,
    create_empty_array,
    iterate,
)
from vecspaces._ops.dispatch import lookup
from vecspaces._ops.flatten import (
    as_flat_array,
    flat_dtype,
    flatdim,
    flatten,
    flatten_space,
    is_flattenable,
    is_space_dtype_shape_equiv,
    same_kind,
    unflatten,
)
from vecspaces._ops.gymnasium import register_converter
from vecspaces._ops.memory_nodes import DictNode, LayoutNode, Path, TupleNode, layout_nodes
from vecspaces._space import Space, cached
from vecspaces.error import (
    CustomSpaceError,
    Error,
    InvalidValueError,
    NotFlattenableError,
    message,
    show,
)
from vecspaces.spaces._container import Container, relocate
from vecspaces.spaces.box import Box
from vecspaces.spaces.dict import Dict
from vecspaces.spaces.tuple import Tuple

# The dtype of an empty container's flat vector: promoting it with any dtype gives that dtype.
EMPTY_FLAT_DTYPE = np.dtype(np.bool_)


class _FlattenPlan:
    """How a container flattens, computed once per space (``cached``) and reused while it keeps its children.

    It holds the children with their flatten and unflatten kernels (looked up once, so per-call dispatch is
    skipped), the slice of the flat vector each child owns and the flat dtype. It stays valid while the
    container holds the same child objects under the same keys and its nested containers' plans stay valid
    (:meth:`fits`): ``Dict.__setitem__`` and direct edits of ``Dict.spaces`` are both noticed. Leaf spaces are
    taken to be immutable, as they are in practice, and kernels are looked up when the plan is built, so
    register kernels for custom spaces before flattening containers that hold them.
    """

    __slots__ = (
        "by_key",
        "children",
        "count",
        "dtype",
        "flattenable",
        "flatteners",
        "keys",
        "nested",
        "size",
        "source",
        "unflatteners",
        "value_type",
    )

    def __init__(self, space: Container[Any]) -> None:
        self.keys = tuple(space.child_keys())
        self.children = tuple(space.children())
        self.count = len(self.children)
        self.by_key = isinstance(space, Dict)  # a Dict's children can change in place
        self.source = space.spaces
        self.value_type = dict if self.by_key else tuple
        # Through _each_child, so that an error building a nested plan names the nested container's key.
        plans = _each_child(space, self.children, _nested_plan, "space")
        self.nested: tuple[tuple[Container[Any], _FlattenPlan], ...] = tuple(
            (child, plan)  # type: ignore[misc]  # a child with a plan is a container
            for child, plan in zip(self.children, plans, strict=True)
            if plan is not None
        )
        self.flattenable = all(is_flattenable(child) for child in self.children)
        self.flatteners = tuple(
            (flatten.dispatch(type(child)), key, child) for key, child in zip(self.keys, self.children, strict=True)
        )
        self.size = 0
        self.dtype = EMPTY_FLAT_DTYPE
        self.unflatteners: tuple[tuple[Callable[..., Any], Space[Any], int, int], ...] = ()
        if self.flattenable:
            sizes = _each_child(space, self.children, flatdim, "space")
            dtypes = [flat.dtype for flat in _each_child(space, self.children, flatten_space, "space")]
            offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).tolist()
            self.size = int(offsets[-1])
            self.dtype = flat_dtype(dtypes) if dtypes else EMPTY_FLAT_DTYPE
            self.unflatteners = tuple(
                (unflatten.dispatch(type(child)), child, start, stop)
                for child, start, stop in zip(self.children, offsets[:-1], offsets[1:], strict=True)
            )

    def fits(self, space: Container[Any]) -> bool:
        """Whether this plan still describes ``space``."""
        source = space.spaces
        if self.by_key:
            if (
                len(source) != self.count
                or not all(map(is_, source.values(), self.children))
                or tuple(source) != self.keys
            ):
                return False
        elif source is not self.source:
            return False
        if not self.nested:  # the common case: skip building a generator
            return True
        # Checked without rebuilding a stale nested plan here: a rebuild that fails would name a path without
        # this container's key. A stale one makes this plan unfit, and its rebuild goes through _each_child.
        return all(plan.fits(child) for child, plan in self.nested)


def _plan(space: Container[Any]) -> _FlattenPlan:
    """The flatten plan of ``space``, built on first use and rebuilt when the space's children changed."""
    return cached(space, _FlattenPlan, _FlattenPlan.fits)


def _nested_plan(child: Space[Any]) -> _FlattenPlan | None:
    """The flatten plan of ``child`` if it is a container, else None."""
    return _plan(child) if isinstance(child, Container) else None


def _each_child(
    space: Container[Any], children: Iterable[Space[Any]], operation: Callable[[Space[Any]], Any], root: str
) -> list[Any]:
    """``[operation(child) for child in children]``, with errors naming the child's path.

    A child's error gets the child's key prefixed to the path it names already (:func:`relocate`), so an error
    raised any number of containers down names its full path once every container has re-raised it; an error
    that names no path yet (raised by a leaf) starts at ``root``.
    """
    results: list[Any] = []
    try:
        for child in children:
            results.append(operation(child))
    except Error as error:
        raise relocate(error, space.path_segment(len(results)), root) from None
    return results


def _variable_path(space: Container[Any]) -> tuple[str, Space[Any]] | None:
    """The path and space of the first child (searching nested containers) that cannot flatten to an array."""
    for index, child in enumerate(space.children()):
        if isinstance(child, Container):
            found = _variable_path(child)
            if found is not None:
                return space.path_segment(index) + found[0], found[1]
        elif not is_flattenable(child):
            return space.path_segment(index), child
    return None


# The flatten family.


@flatdim.register(Dict)
@flatdim.register(Tuple)
def _flatdim_container(space: Container[Any]) -> int:
    plan = _plan(space)
    if not plan.flattenable:
        path, child = _variable_path(space) or ("", space)
        raise NotFlattenableError(
            message(
                f"{type(space).__name__} has no fixed-size flat form",
                expected="children that all flatten to fixed-size arrays",
                got=repr(child),
                at=f"space{path}",
                fix="flatten_space and flatten keep the structure of such spaces; use them instead of flatdim",
            )
        )
    return plan.size


@flatten_space.register(Dict)
@flatten_space.register(Tuple)
def _flatten_space_container(space: Container[Any]) -> Space[Any]:
    plan = _plan(space)
    flat_children = _each_child(space, plan.children, flatten_space, "space")
    if not plan.flattenable:
        return space.rebuild(flat_children)
    if not flat_children:
        return Box(low=0, high=1, shape=(0,), dtype=plan.dtype)
    low = np.concatenate([flat.low for flat in flat_children], dtype=plan.dtype)
    high = np.concatenate([flat.high for flat in flat_children], dtype=plan.dtype)
    return Box(low=low, high=high, dtype=plan.dtype)


@flatten.register(Dict)
@flatten.register(Tuple)
def _flatten_container(space: Container[Any], x: Any) -> Any:
    plan = space._kernel_cache.get(_FlattenPlan)  # the hot path: _plan(space) without the call on a hit
    if plan is None or not plan.fits(space):
        plan = _plan(space)
    if type(x) is plan.value_type and len(x) == plan.count:
        try:
            flat = [kernel(child, x[key]) for kernel, key, child in plan.flatteners]
        except Exception:
            pass  # the checked path below says what is wrong, and where
        else:
            return _join(space, plan, flat)
    parts = space.unpack(x, "x")
    flat = []
    try:
        for child, part in zip(plan.children, parts, strict=True):
            flat.append(flatten(child, part))
    except Error as error:
        raise relocate(error, space.path_segment(len(flat)), _root(error)) from None
    return _join(space, plan, flat)


def _root(error: Error) -> str:
    """Where the path of a child's error from ``flatten`` or ``unflatten`` starts, if it names none yet.

    At the value ``x``, except for a custom space with nothing registered: that is the space's fault, and its
    path starts at ``space`` as it does when the same space fails while the flatten plan is built.
    """
    return "space" if isinstance(error, CustomSpaceError) else "x"


def _join(space: Container[Any], plan: _FlattenPlan, flat: list[Any]) -> Any:
    if not plan.flattenable:
        return space.pack(flat)
    if not flat:
        return np.zeros(0, dtype=plan.dtype)
    return np.concatenate(flat, dtype=plan.dtype)


@unflatten.register(Dict)
@unflatten.register(Tuple)
def _unflatten_container(space: Container[Any], x: Any) -> Any:
    plan = space._kernel_cache.get(_FlattenPlan)  # the hot path: _plan(space) without the call on a hit
    if plan is None or not plan.fits(space):
        plan = _plan(space)
    if not plan.flattenable:
        return _unflatten_each(space, plan, space.unpack(x, "x"))
    if type(x) is np.ndarray and x.ndim == 1 and x.shape[0] == plan.size:
        try:
            values = [kernel(child, x[start:stop]) for kernel, child, start, stop in plan.unflatteners]
        except Exception:
            pass  # the checked path below says what is wrong, and where
        else:
            return space.pack(values)
    x = as_flat_array(x, type(space).__name__)
    if x.shape[0] != plan.size:
        raise InvalidValueError(
            message(
                f"unflatten of {type(space).__name__} got a flat array of the wrong length",
                expected=f"{plan.size} entries (flatdim of the space)",
                got=show(x),
            )
        )
    return _unflatten_each(space, plan, [x[start:stop] for _, _, start, stop in plan.unflatteners])


def _unflatten_each(space: Container[Any], plan: _FlattenPlan, parts: Sequence[Any]) -> Any:
    values: list[Any] = []
    try:
        for child, part in zip(plan.children, parts, strict=True):
            values.append(unflatten(child, part))
    except Error as error:
        raise relocate(error, space.path_segment(len(values)), _root(error)) from None
    return space.pack(values)


@is_space_dtype_shape_equiv.register(Dict)
@is_space_dtype_shape_equiv.register(Tuple)
def _is_container_dtype_shape_equiv(space_1: Container[Any], space_2: Space[Any]) -> bool:
    kind: type[Container[Any]] = Dict if isinstance(space_1, Dict) else Tuple
    other = same_kind(space_1, space_2, kind)
    if other is None:
        return False
    try:
        others = space_1.unpack(other.spaces, "space_2")  # same keys (any order) or same length
    except Error:
        return False
    checked = 0
    try:
        for child, other in zip(space_1.children(), others, strict=True):
            if not is_space_dtype_shape_equiv(child, other):
                return False
            checked += 1
    except Error as error:  # a custom child with nothing registered: name its path, as the other operations do
        raise relocate(error, space_1.path_segment(checked), "space_1") from None
    return True


# The batching family.


@batch_space.register(Dict)
@batch_space.register(Tuple)
def _batch_space_container(space: Container[Any], n: int = 1) -> Space[Any]:
    n = check_batch_size("batch_space", n)
    children = _each_child(space, space.children(), lambda child: batch_space(child, n), "space")
    return space.rebuild(children, seed=deepcopy(space.np_random))


@batch_differing_spaces.register(Dict)  # dispatched on spaces[0], see vecspaces._ops.batch
@batch_differing_spaces.register(Tuple)
def _batch_differing_containers(spaces: Sequence[Container[Any]]) -> Space[Any]:  # type: ignore[misc]
    first = spaces[0]
    rows = [first.unpack(space.spaces, f"spaces[{index}]") for index, space in enumerate(spaces)]
    children: list[Space[Any]] = []
    try:
        for column in zip(*rows, strict=True):
            children.append(batch_differing_spaces(list(column)))
    except Error as error:
        raise relocate(error, first.path_segment(len(children)), "space") from None
    return first.rebuild(children, seed=deepcopy(first.np_random))


# The children's kernels, found through the dispatchers' caches: faster than calling the dispatchers.
_iterate_kernel = lookup(iterate)
_create_empty_kernel = lookup(create_empty_array)


@create_empty_array.register(Dict)
@create_empty_array.register(Tuple)
def _create_empty_array_container(
    space: Container[Any], n: int = 1, fn: Callable[..., npt.NDArray[Any]] = np.zeros
) -> Any:
    # The children's kernels directly: the public create_empty_array checked n and fn once already.
    arrays = _each_child(
        space, space.children(), lambda child: _create_empty_kernel(child.__class__)(child, n, fn), "space"
    )
    return space.pack(arrays)


@iterate.register(Dict)
def _iterate_dict(space: Dict, items: Any) -> Iterator[dict[str, Any]]:
    parts = space.unpack(items, "items")
    iterators = []
    try:
        for child, part in zip(space.spaces.values(), parts, strict=True):
            iterators.append(_iterate_kernel(child.__class__)(child, part))
    except Error as error:
        raise relocate(error, space.path_segment(len(iterators)), "space") from None
    return _rows(space, iterators)


@iterate.register(Tuple)
def _iterate_tuple(space: Tuple, items: Any) -> Iterator[Any]:
    """Iterate a batched Tuple: one tuple per env, or the items themselves for a Tuple of per-env copies.

    A Tuple is either the batch of a Tuple space (each child is a batched child, each item a batched value)
    or the batch of a space with no array layout, a Tuple of ``n`` per-env copies whose items are the ``n``
    values. The second kind is recognised by its children: a space with no ``iterate`` of its own (Text,
    Sequence, Graph, OneOf and custom spaces, whose ``iterate`` raises CustomSpaceError). When a direct child
    is one, the items are iterated as they are, as Gymnasium does. Unlike Gymnasium the test is what the
    child supports, not its exact type, so subclasses of Box or Dict inside a Tuple are iterated child-wise.
    """
    parts = space.unpack(items, "items")
    iterators = []
    try:
        for child, part in zip(space.spaces, parts, strict=True):
            kernel = _iterate_kernel(child.__class__)
            if isinstance(child, Container):
                iterators.append(kernel(child, part))
                continue
            try:
                iterators.append(kernel(child, part))
            except CustomSpaceError:
                return iter(items)
    except Error as error:
        raise relocate(error, space.path_segment(len(iterators)), "space") from None
    return _rows(space, iterators)


def _rows(space: Container[Any], iterators: list[Iterator[Any]]) -> Iterator[Any]:
    """The containers of the children's ``i``-th values, for every ``i``; all must have the same count.

    Built at once rather than yielded one by one: that is faster for the few envs of a batch, and a batch
    with children of different lengths is reported by the call itself.
    """
    try:
        columns = list(zip(*iterators, strict=True))
    except ValueError as error:
        if isinstance(error, Error) or not str(error).startswith("zip()"):
            raise
        raise InvalidValueError(
            message(
                f"iterate over {type(space).__name__} found children with different batch sizes",
                expected="the same number of entries in every child's batch",
                got=f"batches of different lengths ({error})",
            )
        ) from None
    if isinstance(space, Dict):
        keys = tuple(space.spaces)
        return iter([dict(zip(keys, values, strict=True)) for values in columns])
    return iter(columns)


# Shared memory.


@layout_nodes.register(Dict)
def _layout_nodes_dict(space: Dict, path: Path = ()) -> list[LayoutNode]:
    nodes: list[LayoutNode] = [DictNode(path, tuple(space.spaces))]
    for key, child in space.spaces.items():
        nodes += layout_nodes(child, (*path, key))
    return nodes


@layout_nodes.register(Tuple)
def _layout_nodes_tuple(space: Tuple, path: Path = ()) -> list[LayoutNode]:
    nodes: list[LayoutNode] = [TupleNode(path, len(space.spaces))]
    for position, child in enumerate(space.spaces):
        nodes += layout_nodes(child, (*path, position))
    return nodes


# Gymnasium.


@register_converter(Dict)
def _convert_dict(space: Any, lib: Any, child: Callable[[Any, str], Any], seed: Any) -> Any:
    # (key, space) pairs keep their order in both libraries, whereas a plain dict may be re-sorted.
    pairs = [(key, child(sub, f"[{key!r}]")) for key, sub in space.spaces.items()]
    options = {}
    if hasattr(space, "sort_keys") and "sort_keys" in signature(lib.Dict).parameters:
        options["sort_keys"] = space.sort_keys
    return lib.Dict(pairs, seed=seed, **options)


@register_converter(Tuple)
def _convert_tuple(space: Any, lib: Any, child: Callable[[Any, str], Any], seed: Any) -> Any:
    return lib.Tuple([child(sub, f"[{index}]") for index, sub in enumerate(space.spaces)], seed=seed)
