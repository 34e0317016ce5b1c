"""The support table: which operation works on which kind of space, and why not where it does not.

Operations: the flatten family (``flatdim``, ``flatten_space``, ``flatten``, ``unflatten``,
``is_space_dtype_shape_equiv``), the batching family (``batch_space``, ``batch_differing_spaces``,
``concatenate``, ``iterate``, ``create_empty_array``) and shared memory (``create_shared_memory``,
``read_from_shared_memory``, ``write_to_shared_memory``, built on the ``layout_nodes`` registry). Kinds: the
eleven space classes and "custom space", any other subclass of ``Space``.

Whether a pair is supported is read from the operations' ``singledispatch`` registries: a built-in kind is
supported when it has a registered implementation that is not listed in :data:`UNSUPPORTED`, where the
reasons are kept as data. The implementations of the unsupported pairs raise the listed error, with the
listed reason in its message (``tests/test_support_table.py`` checks every pair). :data:`CONDITIONS` lists
the supported pairs that still fail for some spaces of the kind, e.g. ``flatdim`` of a Dict holding a
Sequence. :func:`render_support_table` prints it all.

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vecspaces.error import CustomSpaceError, InvalidTypeError, NotFlattenableError

__all__ = [
    "CONDITIONS",
    "CUSTOM",
    "KINDS",
    "OPERATIONS",
    "UNSUPPORTED",
    "VARIABLE_SIZE",
    "Condition",
    "Support",
    "Unsupported",
    "reason",
    "render_support_table",
    "kind_of",
    "support",
    "support_table",
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

CUSTOM = "custom space"
KINDS: tuple[str, ...] = (
    "Box",
    "Discrete",
    "MultiBinary",
    "MultiDiscrete",
    "Text",
    "Dict",
    "Tuple",
    "Sequence",
    "Graph",
    "OneOf",
    CUSTOM,
)


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


@dataclass(frozen=True)
class Support:
    """One cell of the table.

    Attributes:
        operation: the operation's name (``"shared memory"`` for the three shared-memory functions).
        kind: the space class's name, or ``"custom space"``.
        supported: whether the operation works on spaces of the kind.
        reason: why not when unsupported; when supported, the condition it needs, if any.
        error: the exception type raised when unsupported or when the condition fails.

    Example:
        >>> from vecspaces.spaces import Text
        >>> cell = support("iterate", Text)
        >>> cell.supported, cell.error.__name__
        (False, 'CustomSpaceError')
    """

    operation: str
    kind: str
    supported: bool
    reason: str = ""
    error: type[Exception] | None = None


def _registries() -> dict[str, Callable[..., Any]]:
    # Imported here: the kernels import this module for their messages, and these modules import the kernels.
    from vecspaces._ops.batch import (
        batch_differing_spaces,
        batch_space,
        concatenate,
        create_empty_array,
        iterate,
    )
    from vecspaces._ops.flatten import flatdim, flatten, flatten_space, is_space_dtype_shape_equiv, unflatten
    from vecspaces._ops.memory_nodes import layout_nodes

    functions = (
        flatdim,
        flatten_space,
        flatten,
        unflatten,
        is_space_dtype_shape_equiv,
        batch_space,
        batch_differing_spaces,
        concatenate,
        iterate,
        create_empty_array,
        layout_nodes,
    )
    return dict(zip(OPERATIONS, functions, strict=True))


def _kind_classes() -> dict[str, type]:
    import vecspaces.spaces as spaces

    return {kind: getattr(spaces, kind) for kind in KINDS if kind != CUSTOM}


def kind_of(space_type: type) -> str:
    """The kind of a space class: the built-in class it is or derives from, else ``"custom space"``.

    Example:
        >>> from vecspaces.spaces import Box
        >>> kind_of(Box), kind_of(int)
        ('Box', 'custom space')
    """
    for kind, cls in _kind_classes().items():
        if issubclass(space_type, cls):
            return kind
    return CUSTOM


def support(operation: str, space_type: type) -> Support:
    """Whether ``operation`` works on spaces of type ``space_type``, read from the operation's registry.

    A type with its own registered implementation is supported, whatever its kind. Otherwise the kind's
    implementation (or, for a custom space, the default one) decides, with the reason from :data:`UNSUPPORTED`.

    Args:
        operation: one of :data:`OPERATIONS`.
        space_type: a subclass of ``Space``.

    Returns:
        The table cell.

    Example:
        >>> from vecspaces.spaces import Discrete, Sequence
        >>> support("flatdim", Discrete).supported, support("flatdim", Sequence).supported
        (True, False)
    """
    function = _registries()[operation]
    kind = kind_of(space_type)
    implementation = function.dispatch(space_type)  # type: ignore[attr-defined]
    default = function.registry[object]  # type: ignore[attr-defined]
    if kind == CUSTOM:
        inherited = implementation is default
    else:
        inherited = implementation is function.dispatch(_kind_classes()[kind])  # type: ignore[attr-defined]
        if implementation is default:  # a built-in kind without a registered kernel: a bug, never supported
            return Support(operation, kind, False, "no implementation is registered", NotImplementedError)
    unsupported = UNSUPPORTED.get((operation, kind))
    if inherited and unsupported is not None:
        return Support(operation, kind, False, unsupported.reason, unsupported.error)
    condition = CONDITIONS.get((operation, kind)) if inherited else None
    if condition is not None:
        return Support(operation, kind, True, condition.condition, condition.error)
    return Support(operation, kind, True)


def support_table() -> list[Support]:
    """Every (operation, kind) cell, operation by operation, kinds in :data:`KINDS` order.

    The custom-space column is that of a plain ``Space`` subclass with nothing registered.

    Example:
        >>> cells = support_table()
        >>> len(cells) == len(OPERATIONS) * len(KINDS)
        True
    """
    from vecspaces.spaces.space import Space

    class CustomSpace(Space[Any]):
        """A space of a kind vecspaces does not know."""

    types = {**_kind_classes(), CUSTOM: CustomSpace}
    return [support(operation, types[kind]) for operation in OPERATIONS for kind in KINDS]


def render_support_table() -> str:
    """The support table as text: a grid, then the reasons and the conditions.

    In the grid ``yes`` means supported, ``no`` not supported, ``yes*`` supported under a condition.

    Example:
        >>> print(render_support_table().splitlines()[0])  # doctest: +NORMALIZE_WHITESPACE
        operation Box Discrete MultiBinary MultiDiscrete Text Dict Tuple Sequence Graph OneOf custom
    """
    cells = {(cell.operation, cell.kind): cell for cell in support_table()}
    headers = ["custom" if kind == CUSTOM else kind for kind in KINDS]
    first = max(len(operation) for operation in OPERATIONS)
    widths = [max(len(header), len("yes*")) for header in headers]
    lines = [" ".join([f"{'operation':<{first}}", *(f"{h:<{w}}" for h, w in zip(headers, widths, strict=True))])]
    for operation in OPERATIONS:
        row = [f"{operation:<{first}}"]
        for kind, width in zip(KINDS, widths, strict=True):
            cell = cells[operation, kind]
            mark = "no" if not cell.supported else "yes*" if cell.reason else "yes"
            row.append(f"{mark:<{width}}")
        lines.append(" ".join(row).rstrip())
    lines[0] = lines[0].rstrip()
    lines += ["", "Not supported (operation x kind: reason; error):"]
    lines += [
        f"- {cell.operation} x {cell.kind}: {cell.reason}; {_name(cell.error)}"
        for cell in cells.values()
        if not cell.supported
    ]
    lines += ["", "Supported under a condition (yes*; operation x kind: condition; error otherwise):"]
    lines += [
        f"- {cell.operation} x {cell.kind}: {cell.reason}; {_name(cell.error)}"
        for cell in cells.values()
        if cell.supported and cell.reason
    ]
    lines += [
        "",
        "Custom spaces: batch_space, batch_differing_spaces, concatenate and create_empty_array treat their",
        "values as opaque objects (a Tuple of copies, a tuple of items, a tuple of None); the operations that",
        "need the values' structure raise CustomSpaceError until an implementation is registered. The vector",
        "envs run them: AsyncVectorEnv sends custom leaves through its pipes, the other leaves by shared memory.",
    ]
    return "\n".join(lines)


def _name(error: type[Exception] | None) -> str:
    return error.__name__ if error is not None else ""
