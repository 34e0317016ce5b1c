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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from copy import deepcopy
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # the same API: type checkers check registrations as for functools
    from functools import singledispatch
else:
    from vecspaces._ops.dispatch import singledispatch
from vecspaces._ops.flatten import no_kernel
from vecspaces.error import CustomSpaceError, InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces.space import Space

__all__ = [
    "batch_differing_spaces",
    "batch_space",
    "concatenate",
    "create_empty_array",
    "iterate",
    "register_batched_as_copies",
]


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

    Example:
        >>> from vecspaces.spaces import Box, Discrete
        >>> batch_space(Box(0, 1, (2,)), n=3)
        Box(0.0, 1.0, (3, 2), float32)
        >>> batch_space(Discrete(5), n=3)
        MultiDiscrete([5 5 5])
    """
    from vecspaces.spaces.tuple import Tuple

    if not isinstance(space, Space):
        raise no_kernel("batch_space", space)
    return tuple_of_copies(Tuple, space, n)


@singledispatch
def batch_differing_spaces(spaces: Sequence[Space[Any]]) -> Space[Any]:
    """Return the space of a batch whose ``i``-th value comes from ``spaces[i]``.

    The spaces must be of one kind, shape and dtype, but may differ in bounds (``Box.low``, ``Discrete.n``...).

    Args:
        spaces: one space per batch entry.

    Returns:
        The batched space.

    Raises:
        InvalidValueError: ``spaces`` is empty or the spaces differ in kind, shape or dtype.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> batch_differing_spaces([Discrete(2), Discrete(3, start=1)])
        MultiDiscrete([2 3], start=[0 1])
    """
    from vecspaces.spaces.tuple import Tuple

    spaces = list(spaces)
    if not spaces:
        raise InvalidValueError(
            message("batch_differing_spaces needs spaces", expected="a non-empty list of spaces", got="[]")
        )
    first = spaces[0]
    if not isinstance(first, Space):
        raise no_kernel("batch_differing_spaces", first)
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
    # The list is not what the kernels dispatch on: its first space is.
    kernel = batch_differing_spaces.dispatch(type(first))
    if kernel is batch_differing_spaces.registry[object]:
        return Tuple([deepcopy(space) for space in spaces], seed=deepcopy(first.np_random))
    return kernel(spaces)


@singledispatch
def concatenate(space: Space[Any], items: Iterable[Any], out: Any) -> Any:
    """Gather per-env values of ``space`` into one batched value, writing into ``out`` where it is an array.

    Args:
        space: the space of one value (not the batched space).
        items: one value per batch entry.
        out: a container made by :func:`create_empty_array`; array leaves are filled in place.

    Returns:
        The batched value: ``out`` for array spaces, a new dict or tuple for composites, a tuple otherwise.

    Example:
        >>> from vecspaces.spaces import Box
        >>> space = Box(0, 1, (2,))
        >>> concatenate(space, [np.zeros(2, np.float32), np.ones(2, np.float32)], create_empty_array(space, 2))
        array([[0., 0.],
               [1., 1.]], dtype=float32)
    """
    if not isinstance(space, Space):
        raise no_kernel("concatenate", space)
    return tuple(items)


@singledispatch
def iterate(space: Space[Any], items: Any) -> Iterator[Any]:
    """Iterate over the per-env values of a batched value of the *batched* space ``space``.

    Args:
        space: a batched space, as returned by :func:`batch_space`.
        items: a value of ``space``.

    Returns:
        An iterator over the per-env values.

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
        InvalidValueError: ``n`` is not an int >= 0.

    Example:
        >>> from vecspaces.spaces import Box, Dict, Discrete
        >>> create_empty_array(Dict(a=Box(0, 1, (2,)), b=Discrete(3)), n=2)
        {'a': array([[0., 0.],
               [0., 0.]], dtype=float32), 'b': array([0, 0])}
    """
    if not isinstance(space, Space):
        raise no_kernel("create_empty_array", space)
    return (None,) * check_batch_size("create_empty_array", n, minimum=0)


def fill_rows(items: Sequence[Any], out: Any, shape: tuple[int, ...] | None) -> bool:
    """Copy ``items`` into the rows of ``out`` if they need no conversion or check; return whether it did.

    The fast path of ``concatenate`` for array spaces. It applies when ``out`` is an array of shape
    ``(len(items), *shape)`` and every item is an array (or numpy scalar) of exactly ``out``'s dtype and of shape
    ``shape``; then one assignment copies them all and cannot fail. Otherwise nothing is written, and the
    caller takes its checked path, which converts what it may and explains what it cannot.

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
        # One assignment from the list: faster than np.stack (no per-item expand_dims) and than a loop. numpy
        # refuses items of unequal shapes with a ValueError before writing anything, so checking the first
        # item's shape is enough.
        out[...] = items
    except (AttributeError, ValueError):  # an item that is not an array, or items of unequal shapes
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


def tuple_of_copies(tuple_type: Any, space: Space[Any], n: int) -> Space[Any]:
    """Batch ``space`` as a Tuple of ``n`` copies, each with its own seed drawn from ``space``'s generator.

    The draw uses a copy of the generator, so ``space`` itself is not advanced.
    """
    n = check_batch_size("batch_space", n)
    rng = deepcopy(space.np_random)
    batched = tuple_type([deepcopy(space) for _ in range(n)], seed=deepcopy(space.np_random))
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
    from vecspaces.spaces.tuple import Tuple

    name = kind.__name__

    def batch(space: Space[Any], n: int = 1) -> Space[Any]:
        return tuple_of_copies(Tuple, space, n)

    def batch_differing(spaces: Sequence[Space[Any]]) -> Space[Any]:
        return Tuple([deepcopy(space) for space in spaces], seed=deepcopy(spaces[0].np_random))

    def concatenate_copies(space: Space[Any], items: Iterable[Any], out: Any) -> tuple[Any, ...]:
        # A batch of such values is a tuple of them; ``out`` has no fixed-size slots to fill.
        return tuple(items)

    def iterate_unbatched(space: Space[Any], items: Any) -> Iterator[Any]:
        raise CustomSpaceError(
            message(
                f"iterate needs a batched space ({reason('iterate', name)})",
                expected=f"the space returned by batch_space(space, n), a Tuple of {name}",
                got=repr(space),
                fix="call iterate(batch_space(space, n), items), or iterate over the tuple of values directly",
            )
        )

    batch_space.register(kind, batch)
    batch_differing_spaces.register(kind, batch_differing)
    iterate.register(kind, iterate_unbatched)
    if concatenate_items:
        concatenate.register(kind, concatenate_copies)
