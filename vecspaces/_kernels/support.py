"""The support table as a whole: which operation works on which kind of space, read from the registries.

The reasons and conditions are data in ``vecspaces._ops.support`` (which also states the one rule for custom
spaces); this module reads the rest from the operations' ``singledispatch`` registries, so it sits above the
kernels it reads. A kind (:func:`~vecspaces._space.space_kinds`) is supported when it has a registered
implementation that is not listed in :data:`UNSUPPORTED`; a type with its own implementation is supported
whatever its kind. The kinds are the registry's, so a kind added with ``space_kind`` is a column too:
``KINDS`` (the columns' names, like :func:`kinds`) is read afresh on every access.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vecspaces._ops.batch import batch_differing_spaces, batch_space, concatenate, create_empty_array, iterate
from vecspaces._ops.flatten import flatdim, flatten, flatten_space, is_space_dtype_shape_equiv, unflatten
from vecspaces._ops.memory_nodes import layout_nodes
from vecspaces._ops.support import (
    CONDITIONS,
    CUSTOM,
    OPERATIONS,
    SHARED_MEMORY,
    UNSUPPORTED,
    VARIABLE_SIZE,
    Condition,
    Unsupported,
    reason,
)
from vecspaces._space import Space, space_kinds

__all__ = [
    "CONDITIONS",
    "CUSTOM",
    "OPERATIONS",
    "SHARED_MEMORY",
    "UNSUPPORTED",
    "VARIABLE_SIZE",
    "Condition",
    "Support",
    "Unsupported",
    "kind_classes",
    "kind_of",
    "kinds",
    "reason",
    "registries",
    "render_support_table",
    "support",
    "support_table",
]


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


def kinds() -> tuple[str, ...]:
    """The table's columns: every kind by name, then ``"custom space"``.

    Example:
        >>> kinds()[-2:]
        ('Tuple', 'custom space')
    """
    return (*(kind.__name__ for kind in space_kinds()), CUSTOM)


def __getattr__(name: str) -> tuple[str, ...]:
    # KINDS is computed on every read, so that a kind added after this module was imported is a column too.
    if name == "KINDS":
        return kinds()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def registries() -> dict[str, Callable[..., Any]]:
    """Each operation's ``singledispatch`` function, by the operation's name (``layout_nodes`` for shared memory).

    Example:
        >>> registries()["shared memory"].__name__
        'layout_nodes'
    """
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


def kind_classes() -> dict[str, type[Space[Any]]]:
    """Every kind's class, by name.

    Example:
        >>> kind_classes()["Box"].__module__
        'vecspaces.spaces.box'
    """
    return {kind.__name__: kind for kind in space_kinds()}


def kind_of(space_type: type) -> str:
    """The kind of a space class: the kind it is or derives from, else ``"custom space"``.

    Example:
        >>> from vecspaces.spaces import Box
        >>> kind_of(Box), kind_of(int)
        ('Box', 'custom space')
    """
    for kind in space_kinds():
        if issubclass(space_type, kind):
            return kind.__name__
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
    function = registries()[operation]
    kind = kind_of(space_type)
    implementation = function.dispatch(space_type)  # type: ignore[attr-defined]
    default = function.registry[object]  # type: ignore[attr-defined]
    if kind == CUSTOM:
        inherited = implementation is default
    else:
        inherited = implementation is function.dispatch(kind_classes()[kind])  # type: ignore[attr-defined]
        if implementation is default:  # a kind without a registered kernel: a bug, never supported
            return Support(operation, kind, False, "no implementation is registered", NotImplementedError)
    unsupported = UNSUPPORTED.get((operation, kind))
    if inherited and unsupported is not None:
        return Support(operation, kind, False, unsupported.reason, unsupported.error)
    condition = CONDITIONS.get((operation, kind)) if inherited else None
    if condition is not None:
        return Support(operation, kind, True, condition.condition, condition.error)
    return Support(operation, kind, True)


class _CustomSpace(Space[Any]):
    """A space of a kind vecspaces does not know: the custom-space column."""


def support_table() -> list[Support]:
    """Every (operation, kind) cell, operation by operation, kinds in :func:`kinds` order.

    The custom-space column is that of a plain ``Space`` subclass with nothing registered.

    Example:
        >>> cells = support_table()
        >>> len(cells) == len(OPERATIONS) * len(kinds())
        True
    """
    types: dict[str, type] = {**kind_classes(), CUSTOM: _CustomSpace}
    return [support(operation, types[kind]) for operation in OPERATIONS for kind in kinds()]


def render_support_table() -> str:
    """The support table as text: a grid, then the reasons and the conditions.

    In the grid ``yes`` means supported, ``no`` not supported, ``yes*`` supported under a condition.

    Example:
        >>> print(render_support_table().splitlines()[0])  # doctest: +NORMALIZE_WHITESPACE
        operation Box Dict Discrete Graph MultiBinary MultiDiscrete OneOf Sequence Text Tuple custom
    """
    columns = kinds()
    cells = {(cell.operation, cell.kind): cell for cell in support_table()}
    headers = ["custom" if kind == CUSTOM else kind for kind in columns]
    first = max(len(operation) for operation in OPERATIONS)
    widths = [max(len(header), len("yes*")) for header in headers]
    lines = [" ".join([f"{'operation':<{first}}", *(f"{h:<{w}}" for h, w in zip(headers, widths, strict=True))])]
    for operation in OPERATIONS:
        row = [f"{operation:<{first}}"]
        for kind, width in zip(columns, widths, strict=True):
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
