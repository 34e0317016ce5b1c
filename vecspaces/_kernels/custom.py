"""The custom-space row of the table, and batching as a Tuple of copies.

A space type with no implementation of its own is a custom space and follows the custom-space rule, stated in
``vecspaces._ops.support``. The kernels here carry it out for the batching family, registered for ``object``
(what ``singledispatch`` falls back to); the other operations have no kernel for ``object``, and their
declarations raise the rule's error.

Text, Sequence, Graph and OneOf batch the same way, as copies (:func:`register_batched_as_copies`).

Seeds of the copies (:func:`tuple_of_copies`) are drawn from ``[0, 2**63 - 1)``, where Gymnasium draws them
from ``[0, 10**8)``. Gymnasium's range gives two copies of an ``n``-env batch the same seed, so identical
streams, with probability about ``n**2 / 2e8`` (1 in 200 at 1000 envs); ours makes that negligible. Like
Gymnasium we draw from a copy of the space's generator, so the space itself is not advanced; the seeds differ
from Gymnasium's, but vecspaces' random streams already do (README).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from copy import deepcopy
from typing import Any

import numpy as np

from vecspaces._ops.arguments import as_items, check_batch_size, not_a_space
from vecspaces._ops.batch import (
    batch_differing_spaces,
    batch_space,
    concatenate,
    create_empty_array,
    iterate,
    register_concatenate,
    set_prepare,
)
from vecspaces._ops.support import reason
from vecspaces._space import Space
from vecspaces.error import CustomSpaceError, message
from vecspaces.spaces.tuple import Tuple

__all__ = ["register_batched_as_copies", "tuple_of_copies", "tuple_of_differing_copies"]


def tuple_of_copies(space: Space[Any], n: int = 1) -> Tuple:
    """Batch ``space`` as a Tuple of ``n`` copies, each with its own seed drawn from ``space``'s generator.

    The draw uses a copy of the generator, so ``space`` itself is not advanced. Seeds are drawn from
    ``[0, 2**63 - 1)``, not Gymnasium's ``[0, 10**8)``: see the module docstring.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> space = Discrete(3, seed=0)
        >>> batched = tuple_of_copies(space, 2)
        >>> batched
        Tuple(Discrete(3), Discrete(3))
        >>> batched[0].np_random is space.np_random
        False
    """
    n = check_batch_size("batch_space", n)
    rng = deepcopy(space.np_random)
    batched = Tuple([deepcopy(space) for _ in range(n)], seed=deepcopy(space.np_random))
    for copy, seed in zip(batched, rng.integers(0, 2**63 - 1, size=n), strict=True):
        copy.seed(int(seed))
    return batched


def tuple_of_differing_copies(spaces: Sequence[Space[Any]]) -> Tuple:
    """A Tuple of copies of ``spaces``: the batch of custom spaces, and of kinds whose values vary in size."""
    return Tuple([deepcopy(space) for space in spaces], seed=deepcopy(spaces[0].np_random))


def _prepare_opaque(space: Space[Any], items: Sequence[Any], out: Any) -> Callable[[], tuple[Any, ...]]:
    # The batch is a tuple of the items: nothing to check, and ``out`` has no fixed-size slots to fill.
    batch = tuple(items)
    return lambda: batch


def _batch_space_custom(space: Space[Any], n: int = 1) -> Space[Any]:
    if not isinstance(space, Space):
        raise not_a_space("batch_space", space)
    return tuple_of_copies(space, n)


def _batch_differing_custom(spaces: Sequence[Space[Any]]) -> Tuple:
    # Its own function, not tuple_of_differing_copies: the kinds batched as copies register that one, and the
    # support table tells a kind's own kernel from the fallback by identity.
    return tuple_of_differing_copies(spaces)


def _concatenate_custom(space: Space[Any], items: Iterable[Any], out: Any) -> tuple[Any, ...]:
    if not isinstance(space, Space):
        raise not_a_space("concatenate", space)
    return tuple(as_items(items))


def _create_empty_array_custom(space: Space[Any], n: int = 1, fn: Callable[..., Any] = np.zeros) -> tuple[None, ...]:
    # The public function checked space, n and fn already; a custom value has no placeholder but None.
    return (None,) * n


# Registered for object, the type every other one falls back to. (Not with the decorator form, whose
# registration for object mypy's singledispatch plugin refuses for declarations typed on Space.)
batch_space.register(object, _batch_space_custom)
# Reached only through the public function, which checks ``spaces`` and dispatches on spaces[0].
batch_differing_spaces.register(object, _batch_differing_custom)
concatenate.register(object, _concatenate_custom)
set_prepare(_concatenate_custom, _prepare_opaque)
create_empty_array.register(object, _create_empty_array_custom)


def register_batched_as_copies(kind: type[Space[Any]], *, concatenate_items: bool = True) -> None:
    """Register the batching of a kind whose values have no fixed size: a batch is a Tuple of per-env copies.

    Text, Sequence, Graph and OneOf batch this way, as custom spaces do: ``batch_space`` gives a Tuple of
    independently seeded copies, ``batch_differing_spaces`` a Tuple of copies, ``concatenate`` (unless the kind
    checks its items itself) a tuple of the items, and ``iterate`` of the unbatched space explains that the
    Tuple is what to iterate.

    Args:
        kind: the space class.
        concatenate_items: whether to register ``concatenate`` as a tuple of the items (False for a kind that
            registers its own, checking kernel).
    """
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
    batch_differing_spaces.register(kind, tuple_of_differing_copies)
    iterate.register(kind, iterate_unbatched)
    if concatenate_items:
        register_concatenate(kind, _prepare_opaque, name="concatenate_copies")
