"""Declarations of the batching family.

The family is ``batch_space``, ``batch_differing_spaces``, ``concatenate``, ``iterate`` and
``create_empty_array``.

They live outside ``vecspaces.vector`` because Sequence and Graph need them to sample and check their values,
and ``vecspaces.spaces`` must not import ``vecspaces.vector``. ``vecspaces.vector.utils`` re-exports them.

Each is a ``functools.singledispatch`` function on the type of its first argument (wrapped for a faster call,
see ``vecspaces._ops.dispatch``); implementations live in ``vecspaces._kernels.<space>``. What a space type
with no implementation of its own gets is the custom-space rule (stated in ``vecspaces._ops.support``), whose
kernels ``vecspaces._kernels.custom`` registers for ``object``.

Arguments are checked before any work (``vecspaces._ops.arguments``): a non-space (a Gymnasium space is
converted where an entry checks its arguments itself, see ``vecspaces._ops.dispatch``), ``items`` that are not
iterable, an ``fn`` that is not callable, and a ``spaces`` argument of ``batch_differing_spaces`` that is not a
list of spaces raise :class:`~vecspaces.error.InvalidTypeError` naming the argument.

``concatenate`` is all or nothing: it writes into ``out`` only after every item has been checked, for a Dict
or Tuple too, where every child's column is checked before any child writes. The kernels of the built-in
kinds are written in two phases for this (:func:`register_concatenate`): *prepare* checks and returns the
*write*, which cannot fail. A kernel registered for a custom space has no separate check; inside a Dict or
Tuple it runs after the built-in children have been checked and before any of them writes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:  # the same API: type checkers check registrations as for functools
    from functools import singledispatch
else:
    from vecspaces._ops.dispatch import singledispatch
from vecspaces._ops.arguments import as_items, check_batch_size, no_kernel, not_a_space
from vecspaces._ops.dispatch import convert_if_gymnasium, lookup
from vecspaces._ops.gymnasium import is_gymnasium_space
from vecspaces._space import Space, vecspaces_class
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show

__all__ = [
    "Prepare",
    "batch_differing_spaces",
    "batch_space",
    "concatenate",
    "create_empty_array",
    "fill_rows",
    "items_fit",
    "iterate",
    "preparers",
    "register_concatenate",
    "set_prepare",
    "stack_kernels",
    "stacked_concatenate",
]

F = TypeVar("F", bound=Callable[..., Any])

# A concatenate kernel's check phase: (space, items, out) -> the write, a call that cannot fail.
Prepare = Callable[[Any, Sequence[Any], Any], Callable[[], Any]]


def _share_registry(entry: Callable[..., Any], generic: F) -> F:
    """Make ``entry`` the public face of the dispatcher ``generic``.

    ``entry`` checks its arguments and calls the implementations itself; it gets ``generic``'s name, docstring
    and ``functools`` API (``register``, ``dispatch``, ``registry``...), so registering on it registers on
    ``generic``.
    """
    functools.update_wrapper(entry, generic)
    return entry  # type: ignore[return-value]


@singledispatch
def batch_space(space: Space[Any], n: int = 1) -> Space[Any]:
    """Return the space of a batch of ``n`` values of ``space``.

    Array-like spaces stack along a new first axis (``Discrete`` becomes ``MultiDiscrete``, ``MultiDiscrete``
    and ``MultiBinary`` become ``Box``); Dict and Tuple batch each child; Text, Sequence, Graph, OneOf and
    custom spaces become a ``Tuple`` of ``n`` independently seeded copies. The batched space's generator
    starts in the same state as ``space``'s but is a separate object, so sampling one never advances the other.

    Args:
        space: the space of one value.
        n: the number of values in the batch.

    Returns:
        The batched space.

    Raises:
        InvalidTypeError: ``space`` is not a space.
        InvalidValueError: ``n`` is not an int >= 1.

    Example:
        >>> from vecspaces.spaces import Box, Discrete
        >>> batch_space(Box(0, 1, (2,)), n=3)
        Box(0.0, 1.0, (3, 2), float32)
        >>> batch_space(Discrete(5), n=3)
        MultiDiscrete([5 5 5])
    """
    raise no_kernel("batch_space", space)  # unreachable once vecspaces._kernels.custom registered the rule


@singledispatch
def batch_differing_spaces(spaces: Sequence[Space[Any]]) -> Space[Any]:
    """Return the space of a batch whose ``i``-th value comes from ``spaces[i]``.

    The spaces must be of one kind, shape and dtype, but may differ in bounds (``Box.low``, ``Discrete.n``...).
    Implementations are registered for the kind of the spaces and found from ``spaces[0]``.

    Args:
        spaces: one space per batch entry.

    Returns:
        The batched space.

    Raises:
        InvalidTypeError: ``spaces`` is not a list of spaces (a single space included: batch it with
            :func:`batch_space`), or the spaces are of different kinds.
        InvalidValueError: ``spaces`` is empty or the spaces differ in shape or dtype.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> batch_differing_spaces([Discrete(2), Discrete(3, start=1)])
        MultiDiscrete([2 3], start=[0 1])
    """
    raise no_kernel("batch_differing_spaces", spaces[0], "spaces")  # as batch_space


def _batch_differing_spaces_checked(spaces: Sequence[Space[Any]]) -> Space[Any]:
    expected = "a non-empty list of spaces of one kind"
    if isinstance(spaces, Space) or is_gymnasium_space(spaces):
        fix = "pass a list with one space per env, or batch a single space with batch_space(space, n)"
        raise InvalidTypeError(
            message(
                "batch_differing_spaces was given one space as spaces", expected=expected, got=repr(spaces), fix=fix
            )
        )
    if isinstance(spaces, (str, bytes)) or not isinstance(spaces, Iterable):
        raise InvalidTypeError(
            message("batch_differing_spaces spaces is not a list", expected=expected, got=show(spaces))
        )
    spaces = list(spaces)
    if not spaces:
        raise InvalidValueError(message("batch_differing_spaces needs spaces", expected=expected, got="[]"))
    for index, space in enumerate(spaces):
        if not isinstance(space, Space):
            spaces[index] = space = convert_if_gymnasium(space, "batch_differing_spaces", f"spaces[{index}]")
        if not isinstance(space, Space):
            raise not_a_space("batch_differing_spaces", space, "spaces", at=f"spaces[{index}]")
    first = spaces[0]
    kind = vecspaces_class(type(first))  # of a space made before Gymnasium was imported too
    for index, space in enumerate(spaces):
        if not isinstance(space, kind):
            raise InvalidTypeError(
                message(
                    "batch_differing_spaces needs spaces of one kind",
                    expected=f"instances of {type(first).__name__}",
                    got=show(space),
                    at=f"spaces[{index}]",
                )
            )
    # Dispatched on the first space, not on the list: the list's type says nothing about the kind.
    return _batch_differing_kernel(type(first))(spaces)


_batch_differing_kernel = lookup(batch_differing_spaces)
if not TYPE_CHECKING:  # type checkers keep the dispatcher's type, whose API the entry shares
    # The public call always checks ``spaces`` and dispatches on ``spaces[0]``, even when given a space itself
    # (a dispatcher would hand a Box straight to the Box implementation, which expects a list).
    batch_differing_spaces = _share_registry(_batch_differing_spaces_checked, batch_differing_spaces)


@singledispatch
def concatenate(space: Space[Any], items: Iterable[Any], out: Any) -> Any:
    """Gather per-env values of ``space`` into one batched value, writing into ``out`` where it is an array.

    All or nothing: every item is checked before anything is written, so a failed call leaves ``out`` as it
    was, for Dict and Tuple spaces too.

    Args:
        space: the space of one value (not the batched space).
        items: one value per batch entry.
        out: a container made by :func:`create_empty_array`; array leaves are filled in place.

    Returns:
        The batched value: ``out`` for array spaces, a new dict or tuple for composites, a tuple otherwise.

    Raises:
        InvalidTypeError: ``space`` is not a space, ``items`` is not iterable, or an item (or ``out``) has the
            wrong type; the message names the item (``items[2]``) and its path inside a composite.
        InvalidValueError: an item has the wrong shape, length, keys or characters, or their number differs
            from ``out``'s.

    Example:
        >>> from vecspaces.spaces import Box
        >>> space = Box(0, 1, (2,))
        >>> concatenate(space, [np.zeros(2, np.float32), np.ones(2, np.float32)], create_empty_array(space, 2))
        array([[0., 0.],
               [1., 1.]], dtype=float32)
    """
    raise no_kernel("concatenate", space)  # as batch_space


@singledispatch
def iterate(space: Space[Any], items: Any) -> Iterator[Any]:
    """Iterate over the per-env values of a batched value of the *batched* space ``space``.

    Args:
        space: a batched space, as returned by :func:`batch_space`.
        items: a value of ``space``.

    Returns:
        An iterator over the per-env values: rows of arrays (numpy scalars for a batch of shape-``()``
        values, as Gymnasium), one dict or tuple per env for Dict and Tuple batches.

    Example:
        >>> from vecspaces.spaces import Box
        >>> batched = batch_space(Box(0, 1, (2,)), n=2)
        >>> [row.tolist() for row in iterate(batched, np.array([[0, 1], [1, 0]], np.float32))]
        [[0.0, 1.0], [1.0, 0.0]]
    """
    raise no_kernel("iterate", space)


@singledispatch
def create_empty_array(space: Space[Any], n: int = 1, fn: Callable[..., np.ndarray[Any, Any]] = np.zeros) -> Any:
    """Create a container for a batch of ``n`` values of ``space``, to be filled by :func:`concatenate`.

    Args:
        space: the space of one value.
        n: the number of values in the batch; 0 gives an empty batch (arrays of length 0, empty tuples).
        fn: the array factory, called as ``fn(shape, dtype=dtype)``, e.g. ``np.zeros`` or ``np.empty``.

    Returns:
        Arrays of shape ``(n, *space.shape)`` for array spaces, the same structure for Dict and Tuple, and a
        tuple of ``n`` placeholder values for the other spaces.

    Raises:
        InvalidTypeError: ``space`` is not a space or ``fn`` is not callable.
        InvalidValueError: ``n`` is not an int >= 0.

    Example:
        >>> from vecspaces.spaces import Box, Dict, Discrete
        >>> create_empty_array(Dict(a=Box(0, 1, (2,)), b=Discrete(3)), n=2)
        {'a': array([[0., 0.],
               [0., 0.]], dtype=float32), 'b': array([0, 0])}
    """
    # The public function (below) checks ``space``, ``n`` and ``fn`` before any implementation runs, so
    # implementations take them as valid.
    raise no_kernel("create_empty_array", space)  # as batch_space


def _create_empty_array_checked(
    space: Space[Any], n: int = 1, fn: Callable[..., np.ndarray[Any, Any]] = np.zeros
) -> Any:
    if not isinstance(space, Space):
        space = convert_if_gymnasium(space, "create_empty_array", "space")
    if not isinstance(space, Space):
        raise not_a_space("create_empty_array", space)
    n = check_batch_size("create_empty_array", n)
    if not callable(fn):
        raise InvalidTypeError(
            message(
                "create_empty_array fn is not callable",
                expected="an array factory called as fn(shape, dtype=dtype), such as np.zeros or np.empty",
                got=show(fn),
            )
        )
    return _create_empty_array_kernel(type(space))(space, n, fn)


_create_empty_array_kernel = lookup(create_empty_array)
if not TYPE_CHECKING:  # type checkers keep the dispatcher's type, whose API the entry shares
    # Arguments are checked once here for every kind, custom kernels included.
    create_empty_array = _share_registry(_create_empty_array_checked, create_empty_array)


# Check phases of concatenate kernels, by kernel: a kernel registered for a subclass replaces its parent's,
# and then its parent's check phase must not be used for it.
_PREPARERS: dict[Callable[..., Any], Prepare] = {}


def register_concatenate(kind: type[Space[Any]], prepare: Prepare, name: str | None = None) -> Callable[..., Any]:
    """Register ``concatenate`` for ``kind`` as a check phase ``prepare`` and the write it returns.

    ``prepare(space, items, out)`` checks everything and returns the write, a call with no argument that
    fills ``out`` (where there is one), cannot fail and returns the batched value. ``concatenate`` then is
    ``prepare(space, items, out)()``, and a Dict or Tuple prepares every child before running any write.

    Args:
        kind: the space class.
        prepare: the check phase; it receives ``items`` as a list or tuple.
        name: the kernel's ``__name__`` (default ``_concatenate_<kind>``).

    Returns:
        The registered kernel.
    """

    def kernel(space: Space[Any], items: Iterable[Any], out: Any) -> Any:
        return prepare(space, as_items(items), out)()

    kernel.__name__ = kernel.__qualname__ = name or f"_concatenate_{kind.__name__.lower()}"
    _PREPARERS[kernel] = prepare
    concatenate.register(kind, kernel)
    return kernel


def set_prepare(kernel: Callable[..., Any], prepare: Prepare) -> None:
    """Declare ``prepare`` the check phase of ``kernel``, a concatenate kernel registered with its own fast path."""
    _PREPARERS[kernel] = prepare


# Concatenate kernels whose batch is ``out`` holding one item per row: composite kernels write such children
# themselves when their items fit as they are.
_STACK_KERNELS: set[Callable[..., Any]] = set()


def stacked_concatenate(prepare_checked: Prepare, name: str) -> Callable[..., Any]:
    """A concatenate kernel for an array kind whose batch is ``out`` with one item per row.

    Items that need no conversion are copied at once (:func:`fill_rows`); the others go through
    ``prepare_checked``, the kind's check phase, which converts what it may and names what it cannot. The
    kernel is declared a stack (:func:`stack_kernels`) with that check phase (:func:`set_prepare`); register
    it with ``concatenate.register`` for every kind it serves.

    Args:
        prepare_checked: ``(space, items, out) -> write``: checks every item and returns the write.
        name: the kernel's ``__name__``.
    """

    def kernel(space: Space[Any], items: Iterable[Any], out: Any) -> Any:
        if type(items) is not list and type(items) is not tuple:
            items = as_items(items)
        if fill_rows(items, out, space._shape):
            return out
        return prepare_checked(space, items, out)()

    kernel.__name__ = kernel.__qualname__ = name
    _STACK_KERNELS.add(kernel)
    # Composite kernels check items that fit as they are themselves, so the check phase is the checked path.
    set_prepare(kernel, prepare_checked)
    return kernel


def stack_kernels() -> set[Callable[..., Any]]:
    """The concatenate kernels of array kinds, which fill ``out`` row by row (see :func:`stacked_concatenate`)."""
    return _STACK_KERNELS


def preparers() -> dict[Callable[..., Any], Prepare]:
    """The check phases of concatenate kernels, by kernel (the registry itself, for composite kernels)."""
    return _PREPARERS


def fill_rows(items: Sequence[Any], out: Any, shape: tuple[int, ...] | None) -> bool:
    """Copy ``items`` into the rows of ``out`` if they need no conversion or check; return whether it did.

    The fast path of ``concatenate`` for array spaces. It applies when ``out`` is an array of shape
    ``(len(items), *shape)`` and every item is an array (or numpy scalar) of exactly ``out``'s dtype and of shape
    ``shape``; then one assignment copies them all. Otherwise nothing is written, and the caller takes its checked
    path, which converts what it may and explains what it cannot.

    Example:
        >>> out = np.zeros((2, 3), np.float32)
        >>> fill_rows([np.ones(3, np.float32), np.zeros(3, np.float32)], out, (3,)), out[0].tolist()
        (True, [1.0, 1.0, 1.0])
        >>> fill_rows([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]], out, (3,))  # lists: the checked path converts them
        False
    """
    if type(out) is not np.ndarray or shape is None or out.shape != (len(items), *shape):
        return False
    if not items:
        return True
    dtype = out.dtype
    try:
        for item in items:
            if item.dtype is not dtype:
                return False
        if items[0].shape != shape:
            return False
        # One assignment from the list: faster than np.stack (no per-item expand_dims) and than a loop of rows.
        # numpy refuses items of unequal shapes (and a read-only out) with a ValueError before writing anything,
        # so checking the first item's shape is enough here, where nothing else has been written yet.
        out[...] = items
    except (AttributeError, ValueError):  # an item that is not an array, items of unequal shapes, read-only out
        return False
    return True


def items_fit(items: Sequence[Any], dtype: np.dtype[Any], shape: tuple[int, ...]) -> bool:
    """Whether every item is an array (or numpy scalar) of exactly ``dtype`` and ``shape``.

    Then a single assignment copies the items into rows of that dtype and shape, and cannot fail: what a Dict
    or Tuple checks before writing an array child, since other children may have written already.

    Example:
        >>> float64 = np.dtype(np.float64)
        >>> items_fit([np.zeros(2), np.ones(2)], float64, (2,)), items_fit([[0.0, 0.0]], float64, (2,))
        (True, False)
    """
    scalar = None if shape else dtype.type  # a numpy scalar has shape ()
    for item in items:
        kind = item.__class__
        if kind is not scalar and (kind is not np.ndarray or item.dtype is not dtype or item.shape != shape):
            return False
    return True
