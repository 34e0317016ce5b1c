"""Declarations of the batching family.

The family is ``batch_space``, ``batch_differing_spaces``, ``concatenate``, ``iterate`` and
``create_empty_array``.

They live outside ``vecspaces.vector`` because Sequence and Graph need them to sample and check their values,
and ``vecspaces.spaces`` must not import ``vecspaces.vector``. ``vecspaces.vector.utils`` re-exports them.

Each is a ``functools.singledispatch`` function on the type of its first argument (wrapped for a faster call,
see ``vecspaces._ops.dispatch``); implementations live in ``vecspaces._kernels.<space>``.

Custom spaces (a space type with no registered implementation) follow the project's one rule, stated in
``vecspaces._ops.support`` with the table of what each space kind supports: their values are opaque Python
objects. ``batch_space`` gives a ``Tuple`` of independently seeded copies, ``batch_differing_spaces`` a
``Tuple`` of copies, ``concatenate`` a tuple of the items and ``create_empty_array`` a tuple of ``None``;
``iterate`` over that batched ``Tuple`` yields the items, while ``iterate`` on the custom space itself raises
:class:`~vecspaces.error.CustomSpaceError` (it is never a batch). Operations that need the values' structure
(the flatten family, ``is_space_dtype_shape_equiv``, shared memory) raise CustomSpaceError too.

Arguments are checked before any work: a non-space (a Gymnasium space gets a hint to convert it with
``vecspaces.spaces.from_gymnasium``), ``items`` that are not iterable, an ``fn`` that is not callable, and a
``spaces`` argument of ``batch_differing_spaces`` that is not a list of spaces raise
:class:`~vecspaces.error.InvalidTypeError` naming the argument.

``concatenate`` is all or nothing: it writes into ``out`` only after every item has been checked, for a Dict
or Tuple too, where every child's column is checked before any child writes. The kernels of the built-in
kinds are written in two phases for this (:func:`register_concatenate`): *prepare* checks and returns the
*write*, which cannot fail. A kernel registered for a custom space has no separate check; inside a Dict or
Tuple it runs after the built-in children have been checked and before any of them writes.

Seeds of the copies in a Tuple of copies (:func:`tuple_of_copies`) are drawn from ``[0, 2**63 - 1)``, where
Gymnasium draws them from ``[0, 10**8)``. Gymnasium's range gives two copies of an ``n``-env batch the same
seed, so identical streams, with probability about ``n**2 / 2e8`` (1 in 200 at 1000 envs); ours makes that
negligible. Like Gymnasium we draw from a copy of the space's generator, so the space itself is not
advanced; the seeds differ from Gymnasium's, but vecspaces' random streams already do (README).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from copy import deepcopy
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:  # the same API: type checkers check registrations as for functools
    from functools import singledispatch
else:
    from vecspaces._ops.dispatch import singledispatch
from vecspaces._ops.dispatch import convert_if_gymnasium, lookup
from vecspaces._ops.flatten import is_gymnasium_space, no_kernel, not_a_space
from vecspaces.error import CustomSpaceError, InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces.space import Space

__all__ = [
    "Prepare",
    "as_items",
    "batch_differing_spaces",
    "batch_space",
    "concatenate",
    "create_empty_array",
    "items_fit",
    "iterate",
    "preparers",
    "register_batched_as_copies",
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
    if not isinstance(space, Space):
        raise not_a_space("batch_space", space)
    return tuple_of_copies(space, n)


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
    # What a kind with no registered implementation gets: the custom-space rule.
    return _tuple_of_differing_copies(spaces)


def _tuple_of_differing_copies(spaces: Sequence[Space[Any]]) -> Space[Any]:
    """A Tuple of copies of ``spaces``: the batch of custom spaces, and of kinds whose values vary in size."""
    from vecspaces.spaces.tuple import Tuple

    return Tuple([deepcopy(space) for space in spaces], seed=deepcopy(spaces[0].np_random))


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
    for index, space in enumerate(spaces):
        if not isinstance(space, type(first)):
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
    if not isinstance(space, Space):
        raise not_a_space("concatenate", space)
    return tuple(as_items(items))


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
    # What a kind with no registered implementation gets: the custom-space rule. The public function (below)
    # checks ``space``, ``n`` and ``fn`` before any implementation runs, so implementations take them as valid.
    return (None,) * n


def _create_empty_array_checked(
    space: Space[Any], n: int = 1, fn: Callable[..., np.ndarray[Any, Any]] = np.zeros
) -> Any:
    if not isinstance(space, Space):
        space = convert_if_gymnasium(space, "create_empty_array", "space")
    if not isinstance(space, Space):
        raise not_a_space("create_empty_array", space)
    n = check_batch_size("create_empty_array", n, minimum=0)
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


def as_items(items: Any) -> Sequence[Any]:
    """``items`` as a list or tuple (as given when it is one), or an error naming the argument.

    Example:
        >>> as_items(iter([1, 2]))
        [1, 2]
    """
    if isinstance(items, (list, tuple)):  # subclasses too, e.g. a namedtuple
        return items
    try:
        return list(items)
    except TypeError as error:
        raise InvalidTypeError(
            message(
                "concatenate items is not iterable",
                expected="an iterable of values of the space, one per env",
                got=show(items),
            )
        ) from error


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


def _prepare_opaque(space: Space[Any], items: Sequence[Any], out: Any) -> Callable[[], tuple[Any, ...]]:
    # The custom-space rule, and that of kinds batched as copies: the batch is a tuple of the items. Nothing
    # to check, and ``out`` has no fixed-size slots to fill.
    batch = tuple(items)
    return lambda: batch


set_prepare(concatenate.registry[object], _prepare_opaque)


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


def out_array_problem(space: Space[Any], out: Any) -> Exception | None:
    """The error for an ``out`` of concatenate that is not a writeable numpy array, or None if it is one."""
    if not isinstance(out, np.ndarray):
        return InvalidTypeError(
            message(
                f"concatenate of {space!r} needs an array to write into",
                expected="a numpy array made by create_empty_array",
                got=show(out),
            )
        )
    if not out.flags.writeable:
        return InvalidValueError(
            message(f"concatenate of {space!r} got a read-only out", expected="a writeable array", got=show(out))
        )
    return None


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


def check_batch_size(operation: str, n: object, *, minimum: int = 1) -> int:
    """Check that ``n`` is an integer batch size of at least ``minimum`` and return it as an int.

    Batches are never empty, except the containers of ``create_empty_array`` (``minimum=0``, as Gymnasium).

    Example:
        >>> check_batch_size("create_empty_array", np.int64(0), minimum=0)
        0
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        raise InvalidValueError(
            message(f"{operation} batch size is invalid", expected=f"an int >= {minimum}", got=show(n))
        )
    return int(n)


def tuple_of_copies(space: Space[Any], n: int = 1) -> Space[Any]:
    """Batch ``space`` as a Tuple of ``n`` copies, each with its own seed drawn from ``space``'s generator.

    The draw uses a copy of the generator, so ``space`` itself is not advanced. Seeds are drawn from
    ``[0, 2**63 - 1)``, not Gymnasium's ``[0, 10**8)``: see the module docstring.
    """
    from vecspaces.spaces.tuple import Tuple

    n = check_batch_size("batch_space", n)
    rng = deepcopy(space.np_random)
    batched = Tuple([deepcopy(space) for _ in range(n)], seed=deepcopy(space.np_random))
    for copy, seed in zip(batched, rng.integers(0, 2**63 - 1, size=n), strict=True):
        copy.seed(int(seed))
    return batched


def register_batched_as_copies(kind: type[Space[Any]], *, concatenate_items: bool = True) -> None:
    """Register the batching of a kind whose values have no fixed size: a batch is a Tuple of per-env copies.

    Text, Sequence, Graph and OneOf batch this way, as custom spaces do: ``batch_space`` gives a Tuple of
    independently seeded copies, ``batch_differing_spaces`` a Tuple of copies, ``concatenate`` (unless the kind
    checks its items itself) a tuple of the items, and ``iterate`` of the unbatched space explains that the
    Tuple is what to iterate.
    """
    from vecspaces._ops.support import reason

    name = kind.__name__

    def iterate_unbatched(space: Space[Any], items: Any) -> Iterator[Any]:
        raise CustomSpaceError(
            message(
                f"iterate needs a batched space ({reason('iterate', name)})",
                expected=f"the space returned by batch_space(space, n), a Tuple of {name}",
                got=repr(space),
                fix="call iterate(batch_space(space, n), items), or iterate over the tuple of values directly",
            )
        )

    batch_space.register(kind, tuple_of_copies)
    batch_differing_spaces.register(kind, _tuple_of_differing_copies)
    iterate.register(kind, iterate_unbatched)
    if concatenate_items:
        register_concatenate(kind, _prepare_opaque, name="concatenate_copies")
