"""The support table's data: which operation does not work on which kind of space, and why; the custom-space rule.

Operations: the flatten family (``flatdim``, ``flatten_space``, ``flatten``, ``unflatten``,
``is_space_dtype_shape_equiv``), the batching family (``batch_space``, ``batch_differing_spaces``,
``concatenate``, ``iterate``, ``create_empty_array``) and shared memory (``create_shared_memory``,
``read_from_shared_memory``, ``write_to_shared_memory``, built on the ``layout_nodes`` registry). Kinds: the
kinds of space (the ten built-in classes, :func:`~vecspaces._space.space_kinds`) and "custom space",
any other subclass of ``Space``.

This module holds the reasons as data, low in the stack, so that the declarations and kernels can quote them
in their errors: :data:`UNSUPPORTED` lists the pairs that do not work (their implementations raise the listed
error with the listed reason in its message) and :data:`CONDITIONS` the supported pairs that still fail for
some spaces of the kind, e.g. ``flatdim`` of a Dict holding a Sequence. Whether a pair is supported is read
from the operations' ``singledispatch`` registries by ``vecspaces._kernels.support``, which sits above the
kernels it reads and prints the whole table (``render_support_table``); ``tests/test_support_table.py``
checks every pair.

The one rule for custom spaces
------------------------------

A custom space is a subclass of ``Space`` with no implementation registered for an operation. To vecspaces
its values are opaque Python objects, so:

- the operations that only move values around work on it: ``batch_space`` gives a ``Tuple`` of
  independently seeded copies, ``batch_differing_spaces`` a ``Tuple`` of copies, ``concatenate`` a tuple of
  the items, ``create_empty_array`` a tuple of ``None``; ``iterate`` over that batched ``Tuple`` yields the
  items;
- the operations that need to know the values' structure raise :class:`~vecspaces.error.CustomSpaceError`
  naming the operation and how to register an implementation: the flatten family,
  ``is_space_dtype_shape_equiv``, ``iterate`` on the unbatched space (a custom space is never a batch) and
  shared memory (``layout_nodes`` and the three shared-memory functions);
- the vector envs run them as they are: ``AsyncVectorEnv`` (either ``shared_memory`` setting, every start
  method, pool mode too) sends a custom leaf of an observation or action through its pipes, leaf by leaf as it
  sends Sequence and Graph values, while every other leaf stays in shared memory; ``SyncVectorEnv`` passes the
  values along.

Registering an implementation (``@flatten.register(MySpace)``, ``@layout_nodes.register(MySpace)``...)
replaces the rule for that operation, both for the space itself and inside a Dict, Tuple or other composite;
with a registered layout, a worker pool stores the space's values in shared memory as that layout says.
"""

from __future__ import annotations

from dataclasses import dataclass

from vecspaces.error import CustomSpaceError, InvalidTypeError, NotFlattenableError

__all__ = [
    "CONDITIONS",
    "CUSTOM",
    "OPERATIONS",
    "SHARED_MEMORY",
    "UNSUPPORTED",
    "VARIABLE_SIZE",
    "Condition",
    "Unsupported",
    "reason",
]

SHARED_MEMORY = "shared memory"
OPERATIONS: tuple[str, ...] = (
    "flatdim",
    "flatten_space",
    "flatten",
    "unflatten",
    "is_space_dtype_shape_equiv",
    "batch_space",
    "batch_differing_spaces",
    "concatenate",
    "iterate",
    "create_empty_array",
    SHARED_MEMORY,
)

# The column of every space type that is not of a kind (space_kinds): the custom-space rule.
CUSTOM = "custom space"


@dataclass(frozen=True)
class Unsupported:
    """Why an operation does not work on a kind of space.

    Attributes:
        error: the exception type the operation raises.
        reason: why; the exception's message contains it.

    Example:
        >>> UNSUPPORTED["flatdim", "Graph"].error.__name__
        'NotFlattenableError'
    """

    error: type[Exception]
    reason: str


@dataclass(frozen=True)
class Condition:
    """A supported pair that still fails for some spaces of the kind.

    Attributes:
        condition: when the operation works.
        error: the exception type it raises otherwise.

    Example:
        >>> CONDITIONS["flatdim", "Dict"].condition
        'every child has a fixed flat size (no Sequence or Graph inside)'
    """

    condition: str
    error: type[Exception]


# Shared by every leaf whose values have no fixed size; create_shared_memory's message quotes it.
VARIABLE_SIZE = "its size is not fixed, so no buffer slot can hold it; a worker pool sends it through its pipe"


def _never_a_batch(kind: str) -> str:
    return f"a {kind} is never a batch; a batch of {kind} is a Tuple of copies, iterate that Tuple"


UNSUPPORTED: dict[tuple[str, str], Unsupported] = {
    ("flatdim", "Sequence"): Unsupported(NotFlattenableError, "its length varies, so its flat size is not fixed"),
    ("flatdim", "Graph"): Unsupported(
        NotFlattenableError, "its numbers of nodes and edges vary, so its flat size is not fixed"
    ),
    ("iterate", "Discrete"): Unsupported(
        InvalidTypeError,
        "a Discrete value is a scalar and there is no batched Discrete; its batch is a MultiDiscrete, iterate that",
    ),
    ("iterate", "Text"): Unsupported(CustomSpaceError, _never_a_batch("Text")),
    ("iterate", "Sequence"): Unsupported(CustomSpaceError, _never_a_batch("Sequence")),
    ("iterate", "Graph"): Unsupported(CustomSpaceError, _never_a_batch("Graph")),
    ("iterate", "OneOf"): Unsupported(CustomSpaceError, _never_a_batch("OneOf")),
    (SHARED_MEMORY, "Sequence"): Unsupported(InvalidTypeError, VARIABLE_SIZE),
    (SHARED_MEMORY, "Graph"): Unsupported(InvalidTypeError, VARIABLE_SIZE),
    # The custom-space rule (module docstring): what needs the values' structure is unsupported.
    **{
        (operation, CUSTOM): Unsupported(
            CustomSpaceError, "the values of a custom space are opaque objects with no known flat form"
        )
        for operation in ("flatdim", "flatten_space", "flatten", "unflatten")
    },
    ("is_space_dtype_shape_equiv", CUSTOM): Unsupported(
        CustomSpaceError, "the values of a custom space are opaque objects with no known shape or dtype"
    ),
    ("iterate", CUSTOM): Unsupported(
        CustomSpaceError,
        "a custom space is never a batch; its batch is a Tuple of copies, iterate that Tuple",
    ),
    (SHARED_MEMORY, CUSTOM): Unsupported(
        CustomSpaceError,
        "the values of a custom space are opaque objects with no known fixed-size layout; "
        "a worker pool sends them through its pipe",
    ),
}

_FIXED_FLAT_SIZE = Condition("every child has a fixed flat size (no Sequence or Graph inside)", NotFlattenableError)
_FIXED_SIZE = Condition(
    "every child has a fixed size; the three shared-memory functions name the path of a Sequence or Graph "
    "inside (also for memory made by SharedLayout.allocate), and a worker pool sends such a child through its pipe; "
    "a custom child without a registered layout follows the custom-space rule (CustomSpaceError here, through "
    "the pipe in a worker pool)",
    InvalidTypeError,
)
CONDITIONS: dict[tuple[str, str], Condition] = {
    ("flatdim", "Dict"): _FIXED_FLAT_SIZE,
    ("flatdim", "Tuple"): _FIXED_FLAT_SIZE,
    ("flatdim", "OneOf"): Condition(
        "every branch has a fixed flat size (no Sequence or Graph inside)", NotFlattenableError
    ),
    ("iterate", "Box"): Condition(
        "the Box is a batch, as made by batch_space (a Box of shape () is not one)", InvalidTypeError
    ),
    (SHARED_MEMORY, "Dict"): _FIXED_SIZE,
    (SHARED_MEMORY, "Tuple"): _FIXED_SIZE,
    (SHARED_MEMORY, "OneOf"): Condition(
        "every branch has a fixed size; otherwise the whole OneOf is a variable-size leaf, which a worker "
        "pool sends through its pipe",
        InvalidTypeError,
    ),
}


def reason(operation: str, kind: str) -> str:
    """The reason ``operation`` does not work on ``kind``, for the message of the error it raises.

    Example:
        >>> reason("flatdim", "Sequence")
        'its length varies, so its flat size is not fixed'
    """
    return UNSUPPORTED[operation, kind].reason
