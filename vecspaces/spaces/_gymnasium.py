"""Conversion of spaces between Gymnasium and vecspaces: :func:`from_gymnasium` and :func:`to_gymnasium`.

Both libraries build every space kind from the same constructor arguments and expose them under the same
attribute names, so one converter per kind serves both directions: it reads the parameters of a space of one
library and rebuilds the space with the other library's class of the same name, converting children
recursively. The converted space gets a copy of the source's random generator, so it draws the same next
samples without sharing (and advancing) the source's generator.

Gymnasium is optional: it is imported only when a conversion needs it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from copy import deepcopy
from types import ModuleType
from typing import Any

import numpy as np

from vecspaces.error import CustomSpaceError, InvalidTypeError, message, show
from vecspaces.spaces.space import Space

__all__ = ["from_gymnasium", "to_gymnasium"]

# (space, target library, converter of a child at a path suffix, seed for the new space) -> new space
Converter = Callable[[Any, ModuleType, Callable[[Any, str], Any], Any], Any]


def _box(space: Any, lib: ModuleType, child: Callable[[Any, str], Any], seed: Any) -> Any:
    low = _bound(space.low, space.bounded_below, -np.inf)
    high = _bound(space.high, space.bounded_above, np.inf)
    box = lib.Box(low, high, space.shape, space.dtype, seed=seed)
    # Left: an integer Box unbounded on only some entries. Gymnasium wraps an infinity inside an int64 bound
    # array to the dtype minimum, so the dtype limits go in and the flags are copied.
    if not np.array_equal(box.bounded_below, space.bounded_below):
        box.bounded_below = space.bounded_below.copy()
    if not np.array_equal(box.bounded_above, space.bounded_above):
        box.bounded_above = space.bounded_above.copy()
    return box


def _bound(values: np.ndarray, bounded: np.ndarray, infinity: float) -> np.ndarray | float:
    # An integer Box stores an infinite bound as the dtype's limit, which would count as bounded if passed
    # back; a side unbounded everywhere is given back as the infinity the user gave.
    if values.dtype.kind != "f" and values.size and not np.any(bounded):
        return infinity
    return values.copy()


def _discrete(space: Any, lib: ModuleType, child: Callable[[Any, str], Any], seed: Any) -> Any:
    return lib.Discrete(int(space.n), seed=seed, start=int(space.start), dtype=space.dtype)


def _multi_binary(space: Any, lib: ModuleType, child: Callable[[Any, str], Any], seed: Any) -> Any:
    return lib.MultiBinary(space.n, seed=seed)


def _multi_discrete(space: Any, lib: ModuleType, child: Callable[[Any, str], Any], seed: Any) -> Any:
    return lib.MultiDiscrete(space.nvec.copy(), dtype=space.dtype, seed=seed, start=space.start.copy())


def _text(space: Any, lib: ModuleType, child: Callable[[Any, str], Any], seed: Any) -> Any:
    # A string keeps its order in both libraries (a set would be sorted); the order is the flatten encoding.
    charset = "".join(space.character_list)
    return lib.Text(space.max_length, min_length=space.min_length, charset=charset, seed=seed)


def _dict(space: Any, lib: ModuleType, child: Callable[[Any, str], Any], seed: Any) -> Any:
    # (key, space) pairs keep their order in both libraries, whereas a plain dict may be re-sorted.
    pairs = [(key, child(sub, f"[{key!r}]")) for key, sub in space.spaces.items()]
    options = {}
    if hasattr(space, "sort_keys") and "sort_keys" in inspect.signature(lib.Dict).parameters:
        options["sort_keys"] = space.sort_keys
    return lib.Dict(pairs, seed=seed, **options)


def _tuple(space: Any, lib: ModuleType, child: Callable[[Any, str], Any], seed: Any) -> Any:
    return lib.Tuple([child(sub, f"[{index}]") for index, sub in enumerate(space.spaces)], seed=seed)


def _sequence(space: Any, lib: ModuleType, child: Callable[[Any, str], Any], seed: Any) -> Any:
    return lib.Sequence(child(space.feature_space, ".feature_space"), seed=seed, stack=space.stack)


def _graph(space: Any, lib: ModuleType, child: Callable[[Any, str], Any], seed: Any) -> Any:
    edge_space = None if space.edge_space is None else child(space.edge_space, ".edge_space")
    return lib.Graph(child(space.node_space, ".node_space"), edge_space, seed=seed)


def _one_of(space: Any, lib: ModuleType, child: Callable[[Any, str], Any], seed: Any) -> Any:
    return lib.OneOf([child(sub, f"[{index}]") for index, sub in enumerate(space.spaces)], seed=seed)


# Class name (the same in both libraries) -> converter.
CONVERTERS: dict[str, Converter] = {
    "Box": _box,
    "Discrete": _discrete,
    "MultiBinary": _multi_binary,
    "MultiDiscrete": _multi_discrete,
    "Text": _text,
    "Dict": _dict,
    "Tuple": _tuple,
    "Sequence": _sequence,
    "Graph": _graph,
    "OneOf": _one_of,
}


def _convert(space: Any, source: ModuleType, target: ModuleType, caller: str, path: str) -> Any:
    """Rebuild ``space``, a space of library ``source``, as a space of library ``target``."""
    if isinstance(space, target.Space):
        return space
    converter = _converter_for(type(space), source)
    if converter is None:
        kind = type(space)
        raise CustomSpaceError(
            message(
                f"{caller} cannot convert the custom space kind {kind.__qualname__} (module {kind.__module__})",
                expected=f"a space of a built-in kind ({', '.join(CONVERTERS)}) or a subclass of one",
                got=show(space),
                at=path,
                fix=f"build the {target.__name__} equivalent of this space yourself",
            )
        )
    # Reading the private generator, not the np_random property: on a composite Gymnasium space the
    # property re-seeds the children when no generator exists yet, which would change the source.
    rng = getattr(space, "_np_random", None)
    seed = None if rng is None else deepcopy(rng)

    def child(sub: Any, suffix: str) -> Any:
        return _convert(sub, source, target, caller, path + suffix)

    return converter(space, target, child, seed)


def _converter_for(kind: type, source: ModuleType) -> Converter | None:
    # The nearest built-in ancestor decides, so a subclass of Box converts as a Box.
    for ancestor in kind.__mro__:
        name = ancestor.__name__
        if name in CONVERTERS and getattr(source, name, None) is ancestor:
            return CONVERTERS[name]
    return None


def _gymnasium_spaces(caller: str) -> ModuleType:
    """Import ``gymnasium.spaces``, saying how to install gymnasium when the import fails."""
    try:
        import gymnasium.spaces
    except ImportError as exc:
        raise ImportError(
            message(
                f"{caller} needs gymnasium, which cannot be imported",
                expected="an installed gymnasium package",
                got=str(exc),
                fix="pip install gymnasium",
            )
        ) from exc
    return gymnasium.spaces


def _vecspaces_spaces() -> ModuleType:
    import vecspaces.spaces  # the package imports this module, so it is complete only after that import

    return vecspaces.spaces


def from_gymnasium(space: Any) -> Space[Any]:
    """Convert a Gymnasium space, nested ones included, to the equivalent vecspaces space.

    Every parameter is kept (bounds, dtype, ``start``, ``nvec``, the charset in its index order, the key
    order of a Dict, ``stack``, a missing edge space), and the new space samples the same next values as the
    original from a copy of its random generator. A subclass of a built-in Gymnasium space converts as that
    built-in kind. A vecspaces space is returned unchanged.

    Args:
        space: a ``gymnasium.spaces.Space`` of one of the 10 built-in kinds, or a vecspaces space.

    Returns:
        The vecspaces space.

    Raises:
        InvalidTypeError: ``space`` is not a space of either library.
        CustomSpaceError: ``space`` (or a child of it) is a custom Gymnasium space kind with no vecspaces
            counterpart.

    Example:
        >>> import gymnasium
        >>> from_gymnasium(gymnasium.spaces.Discrete(3, start=-1))
        Discrete(3, start=-1)
    """
    target = _vecspaces_spaces()
    if isinstance(space, target.Space):
        return space
    try:
        source: ModuleType | None = _gymnasium_spaces("from_gymnasium")
    except ImportError:
        source = None  # then ``space`` cannot be a Gymnasium space
    if source is None or not isinstance(space, source.Space):
        raise InvalidTypeError(
            message(
                "from_gymnasium needs a space",
                expected="a gymnasium.spaces.Space (a vecspaces space is returned unchanged)",
                got=show(space),
            )
        )
    converted: Space[Any] = _convert(space, source, target, "from_gymnasium", "space")
    return converted


def convert_from_gymnasium(space: Any, caller: str, path: str = "space") -> Space[Any]:
    """:func:`from_gymnasium` for callers that already know ``space`` is a Gymnasium space.

    Errors name ``caller`` (the operation that needed the conversion) and start their path at ``path`` (the
    caller's argument), so ``flatdim(gym_space)`` reports ``flatdim cannot convert ... at space['a']``.

    Args:
        space: a ``gymnasium.spaces.Space`` (gymnasium is therefore imported).
        caller: the name of the function that converts, for error messages.
        path: the name of the caller's argument that holds ``space``.

    Returns:
        The vecspaces space.

    Raises:
        CustomSpaceError: ``space`` (or a child of it) is a custom Gymnasium space kind.

    Example:
        >>> import gymnasium
        >>> convert_from_gymnasium(gymnasium.spaces.MultiBinary(3), "flatdim")
        MultiBinary(3)
    """
    converted: Space[Any] = _convert(space, _gymnasium_spaces(caller), _vecspaces_spaces(), caller, path)
    return converted


def convert_to_gymnasium(space: Any, caller: str, path: str = "space") -> Any:
    """:func:`to_gymnasium` (which calls it) with errors that name ``caller`` and start their path at ``path``.

    Args:
        space: a vecspaces space or a Gymnasium space (returned unchanged).
        caller: the name of the function that converts, for error messages.
        path: where ``space`` is for the caller, e.g. ``env.observation_space``.

    Returns:
        The ``gymnasium.spaces.Space``.

    Raises:
        ImportError: gymnasium is not installed.
        InvalidTypeError: ``space`` is not a space of either library.
        CustomSpaceError: ``space`` (or a child of it) is a custom space kind with no Gymnasium counterpart.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> convert_to_gymnasium(Discrete(2), "as_gymnasium_env", "env.action_space")
        Discrete(2)
    """
    target = _gymnasium_spaces(caller)
    if isinstance(space, target.Space):
        return space
    source = _vecspaces_spaces()
    if not isinstance(space, source.Space):
        raise InvalidTypeError(
            message(
                f"{caller} needs a space" + ("" if path == "space" else f" as {path}"),
                expected="a vecspaces space (a gymnasium.spaces.Space is returned unchanged)",
                got=show(space),
            )
        )
    return _convert(space, source, target, caller, path)


def to_gymnasium(space: Any) -> Any:
    """Convert a vecspaces space, nested ones included, to the equivalent Gymnasium space.

    The inverse of :func:`from_gymnasium`, with the same guarantees: every parameter is kept and the new space
    samples the same next values from a copy of the original's random generator. A Gymnasium space is
    returned unchanged.

    Args:
        space: a vecspaces space of one of the 10 built-in kinds, or a Gymnasium space.

    Returns:
        The ``gymnasium.spaces.Space``.

    Raises:
        ImportError: gymnasium is not installed.
        InvalidTypeError: ``space`` is not a space of either library.
        CustomSpaceError: ``space`` (or a child of it) is a custom space kind with no Gymnasium counterpart.

    Example:
        >>> from vecspaces.spaces import Box
        >>> to_gymnasium(Box(0, 1, (2,)))
        Box(0.0, 1.0, (2,), float32)
    """
    return convert_to_gymnasium(space, "to_gymnasium")
