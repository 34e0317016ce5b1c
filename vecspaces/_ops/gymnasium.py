"""Conversion of spaces between Gymnasium and vecspaces: :func:`from_gymnasium` and :func:`to_gymnasium`.

Both libraries build every space kind from the same constructor arguments and expose them under the same
attribute names, so one converter per kind serves both directions: it reads the parameters of a space of one
library and rebuilds the space with the other library's class of the same name, converting children
recursively. Each kind's converter lives in its kernel module (``vecspaces._kernels.<kind>``), which registers
it with :func:`register_converter`; this module holds no list of kinds. The converted space gets a copy of the
source's random generator, so it draws the same next samples without sharing (and advancing) the source's
generator.

This module sits with the space base class, below the concrete spaces: it finds the vecspaces classes in the
registry of kinds (:func:`~vecspaces._space.space_kinds`), so the operations' dispatch
(``vecspaces._ops.dispatch``) and the spaces' ``__eq__`` (:func:`equals_gymnasium`) can convert Gymnasium
spaces without importing a concrete space. Gymnasium is optional: it is imported only when a conversion
needs it, and a value is a Gymnasium space only if ``gymnasium.spaces`` was imported already.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from copy import deepcopy
from typing import Any

import numpy as np

from vecspaces._space import Space, space_kinds
from vecspaces.error import CustomSpaceError, Error, InvalidTypeError, InvalidValueError, message, show

__all__ = [
    "Converter",
    "GymnasiumCustomSpace",
    "adopt",
    "convert_from_gymnasium",
    "convert_to_gymnasium",
    "converters",
    "equals_gymnasium",
    "from_gymnasium",
    "is_gymnasium_graph_instance",
    "is_gymnasium_space",
    "is_gymnasium_space_class",
    "register_converter",
    "to_gymnasium",
]

# (space, target library, converter of a child at a path suffix, seed for the new space) -> new space. The
# target library is ``gymnasium.spaces`` or vecspaces' classes by name; a converter calls ``lib.<Kind>(...)``.
Converter = Callable[[Any, Any, Callable[[Any, str], Any], Any], Any]

_CONVERTERS: dict[type[Space[Any]], Converter] = {}


def register_converter(kind: type[Space[Any]]) -> Callable[[Converter], Converter]:
    """Register the decorated converter for the spaces of ``kind``, in both directions (in the kind's kernel module).

    ``converter(space, lib, child, seed)`` reads the parameters of ``space`` (a space of either library) and
    builds the same space with ``lib``'s class of the kind's name, calling ``child(sub, suffix)`` for each
    nested space (``suffix`` is its place in error paths, e.g. ``"['a']"``) and passing ``seed`` on. A kind
    without a converter is refused with a :class:`~vecspaces.error.CustomSpaceError`, except that
    :func:`from_gymnasium` holds a custom Gymnasium space in a :class:`GymnasiumCustomSpace`.

    Args:
        kind: a kind of space (a class marked with :func:`~vecspaces._space.space_kind`).

    Returns:
        The decorator, which returns the converter unchanged.

    Raises:
        InvalidTypeError: ``kind`` is not a kind of space.
    """
    if kind not in space_kinds():
        raise InvalidTypeError(
            message(
                "register_converter needs a kind of space",
                expected="a class marked with @space_kind",
                got=show(kind),
            )
        )

    def register(converter: Converter) -> Converter:
        _CONVERTERS[kind] = converter
        return converter

    return register


def converters() -> dict[str, Converter]:
    """The registered converters by kind name, in the order of the kinds.

    Example:
        >>> list(converters())[:4]
        ['Box', 'Dict', 'Discrete', 'Graph']
    """
    return {kind.__name__: _CONVERTERS[kind] for kind in space_kinds() if kind in _CONVERTERS}


class _Vecspaces:
    """vecspaces as a library of space classes by name, as the module ``gymnasium.spaces`` is for Gymnasium."""

    __name__ = "vecspaces.spaces"

    def __init__(self) -> None:
        self.Space = Space

    def __getattr__(self, name: str) -> type[Space[Any]]:
        for kind in space_kinds():
            if kind.__name__ == name:
                return kind
        raise AttributeError(name)


_VECSPACES = _Vecspaces()


class GymnasiumCustomSpace(Space[Any]):
    """A space of a custom Gymnasium kind, held as it is: what :func:`from_gymnasium` gives for one.

    A custom kind (a user's subclass of ``gymnasium.spaces.Space``) has no vecspaces counterpart to rebuild it
    as, so vecspaces holds the Gymnasium space and treats it as one of its own custom spaces: batched as a
    Tuple of copies, its values opaque (a worker pool sends them through its pipe). Sampling, membership,
    seeding, JSON and equality are the Gymnasium space's own; :func:`to_gymnasium` gives the space back.

    Args:
        space: the Gymnasium space.

    Example:
        >>> import gymnasium
        >>> class Coin(gymnasium.spaces.Space):
        ...     def sample(self, mask=None, probability=None):
        ...         return int(self.np_random.integers(2))
        ...     def contains(self, x):
        ...         return x in (0, 1)
        >>> coin = from_gymnasium(Coin())
        >>> coin.contains(1), coin.contains(2), to_gymnasium(coin) is coin.space
        (True, False, True)
    """

    def __init__(self, space: Any) -> None:
        self.space = space
        super().__init__(space.shape, space.dtype)

    @property
    def np_random(self) -> np.random.Generator:
        """The Gymnasium space's generator."""
        rng: np.random.Generator = self.space.np_random
        return rng

    @property
    def is_np_flattenable(self) -> bool:
        """What the Gymnasium space says."""
        return bool(self.space.is_np_flattenable)

    def sample(self, mask: Any | None = None, probability: Any | None = None) -> Any:
        """A sample of the Gymnasium space (``mask`` and ``probability`` are passed on only when given)."""
        given = {key: value for key, value in (("mask", mask), ("probability", probability)) if value is not None}
        return self.space.sample(**given)

    def contains(self, x: Any) -> bool:
        """Whether the Gymnasium space contains ``x``."""
        return bool(self.space.contains(x))

    def seed(self, seed: Any = None) -> Any:
        """Seed the Gymnasium space; returns what its ``seed`` returns."""
        return self.space.seed(seed)

    def to_jsonable(self, sample_n: Sequence[Any]) -> list[Any]:
        """The Gymnasium space's JSON form of a batch of samples."""
        return list(self.space.to_jsonable(sample_n))

    def from_jsonable(self, sample_n: Iterable[Any]) -> list[Any]:
        """The Gymnasium space's samples from their JSON form."""
        return list(self.space.from_jsonable(sample_n))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, GymnasiumCustomSpace):
            other = other.space
        return bool(self.space == other)

    def __repr__(self) -> str:
        return repr(self.space)


def adopt(value: Any) -> Space[Any] | None:
    """``value`` as a vecspaces space: itself, a Gymnasium space converted by :func:`from_gymnasium`, or None.

    Composite spaces and vector envs take their children or sub-env spaces through this, so Gymnasium spaces
    (custom kinds included) work wherever vecspaces spaces do; None tells the caller ``value`` is no space.

    Example:
        >>> import gymnasium
        >>> adopt(gymnasium.spaces.Discrete(2)), adopt("Discrete(2)")
        (Discrete(2), None)
    """
    if isinstance(value, Space):
        return value
    if is_gymnasium_space(value):
        return from_gymnasium(value)
    return None


def is_gymnasium_space_class(cls: type) -> bool:
    """Whether ``cls`` is ``gymnasium.spaces.Space`` or a subclass, found without importing gymnasium.

    If ``gymnasium.spaces`` is not in ``sys.modules`` nothing can be one of its spaces.

    Example:
        >>> from vecspaces.spaces import Box
        >>> is_gymnasium_space_class(Box), is_gymnasium_space_class(int)
        (False, False)
    """
    gymnasium_spaces = sys.modules.get("gymnasium.spaces")
    return (
        gymnasium_spaces is not None
        and isinstance(cls, type)
        and issubclass(cls, gymnasium_spaces.Space)
        and not issubclass(cls, Space)  # a vecspaces space is one of Gymnasium's too while gymnasium is imported
    )


def is_gymnasium_graph_instance(value: object) -> bool:
    """Whether ``value`` is a Gymnasium ``GraphInstance`` (a value of its Graph space), found without importing it.

    Example:
        >>> is_gymnasium_graph_instance((1, 2, 3))
        False
    """
    gymnasium_spaces = sys.modules.get("gymnasium.spaces")
    graph_instance = getattr(gymnasium_spaces, "GraphInstance", None)
    return graph_instance is not None and isinstance(value, graph_instance)


def is_gymnasium_space(value: object) -> bool:
    """Whether ``value`` is a Gymnasium space, found without importing gymnasium.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> is_gymnasium_space(Discrete(2)), is_gymnasium_space("Discrete(2)")
        (False, False)
    """
    return is_gymnasium_space_class(type(value))


def equals_gymnasium(space: Space[Any], other: object) -> bool:
    """Whether ``other`` is a Gymnasium space equal to ``space`` by value; False for anything else.

    The ``__eq__`` of every built-in kind calls this where ``other`` is not of its own kind, so it costs
    nothing when two vecspaces spaces are compared. A Gymnasium space is converted with
    :func:`from_gymnasium` and compared by the vecspaces rules of ``space``'s kind, nested spaces included;
    one that has no vecspaces form (a custom Gymnasium kind) equals no vecspaces space.

    With the Gymnasium space on the left, Gymnasium's ``__eq__`` decides and Python never asks vecspaces: it
    compares by its own rules a vecspaces space made while Gymnasium was imported (an instance of Gymnasium's
    class then, see :class:`~vecspaces._space.Space`), and answers False for one made before.

    Args:
        space: the vecspaces space whose ``__eq__`` was called.
        other: what it is compared with.

    Returns:
        True when ``other`` is a Gymnasium space equal to ``space``.

    Example:
        >>> import gymnasium
        >>> from vecspaces.spaces import Discrete
        >>> Discrete(3, start=1) == gymnasium.spaces.Discrete(3, start=1)
        True
        >>> gymnasium.spaces.Discrete(3, start=1) == Discrete(3, start=1)  # Gymnasium's __eq__ decides
        True
    """
    if not is_gymnasium_space(other):
        return False
    try:
        converted = convert_from_gymnasium(other, "==", "other")
    except Error:  # a custom Gymnasium kind, or parameters no vecspaces space takes: nothing here equals it
        return False
    return bool(space.__eq__(converted))


def _convert(space: Any, source: Any, target: Any, caller: str, path: str, hold_custom: bool = False) -> Any:
    """Rebuild ``space``, a space of library ``source``, as a space of library ``target``.

    A custom Gymnasium kind is refused, or with ``hold_custom`` held in a :class:`GymnasiumCustomSpace`.
    """
    if isinstance(space, target.Space) and not isinstance(space, source.Space):
        return space
    if isinstance(space, GymnasiumCustomSpace):
        return space.space
    converter = _converter_for(type(space), source)
    if converter is None and hold_custom and target is _VECSPACES:
        return GymnasiumCustomSpace(space)
    if converter is None:
        kind = type(space)
        raise CustomSpaceError(
            message(
                f"{caller} cannot convert the custom space kind {kind.__qualname__} (module {kind.__module__})",
                expected=f"a space of a built-in kind ({', '.join(converters())}) or a subclass of one",
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
        return _convert(sub, source, target, caller, path + suffix, hold_custom)

    try:
        return converter(space, target, child, seed)
    except Error:
        raise
    except Exception as error:
        if target is _VECSPACES:
            raise
        # An older Gymnasium than the one vecspaces follows refuses some spaces (1.3 and before: a Graph of Dict
        # nodes): say so, rather than let its bare assertion through.
        version = getattr(sys.modules.get("gymnasium"), "__version__", "?")
        refusal = (str(error).splitlines() or [""])[0]
        raise InvalidValueError(
            message(
                f"{caller} cannot convert this {type(space).__name__}: the installed Gymnasium {version} refuses "
                f"it ({type(error).__name__}: {refusal})",
                expected="a space that this Gymnasium can build",
                got=show(space),
                at=path,
                fix="upgrade Gymnasium (pip install 'gymnasium>=1.4'), whose spaces vecspaces' match",
            )
        ) from error


def _converter_for(kind: type, source: Any) -> Converter | None:
    # The nearest built-in ancestor decides, so a subclass of Box converts as a Box.
    known = converters()
    for ancestor in kind.__mro__:
        name = ancestor.__name__
        if name in known and getattr(source, name, None) is ancestor:
            return known[name]
    return None


def _gymnasium_spaces(caller: str) -> Any:
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


def from_gymnasium(space: Any) -> Space[Any]:
    """Convert a Gymnasium space, nested ones included, to the equivalent vecspaces space.

    Every parameter is kept (bounds, dtype, ``start``, ``nvec``, the charset in its index order, the key
    order of a Dict, ``stack``, a missing edge space), and the new space samples the same next values as the
    original from a copy of its random generator. A subclass of a built-in Gymnasium space converts as that
    built-in kind. A space of a custom Gymnasium kind, which has no vecspaces counterpart, is held as it is in
    a :class:`GymnasiumCustomSpace` (nested ones too), which vecspaces treats as a custom space of its own.
    A vecspaces space is returned unchanged.

    Args:
        space: a ``gymnasium.spaces.Space``, or a vecspaces space.

    Returns:
        The vecspaces space.

    Raises:
        InvalidTypeError: ``space`` is not a space of either library.

    Example:
        >>> import gymnasium
        >>> from_gymnasium(gymnasium.spaces.Discrete(3, start=-1))
        Discrete(3, start=-1)
    """
    target = _VECSPACES
    if isinstance(space, target.Space):
        return space
    try:
        source: Any = _gymnasium_spaces("from_gymnasium")
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
    converted: Space[Any] = _convert(space, source, target, "from_gymnasium", "space", hold_custom=True)
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
    converted: Space[Any] = _convert(space, _gymnasium_spaces(caller), _VECSPACES, caller, path)
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
        InvalidValueError: the installed Gymnasium cannot build it (before 1.4, a Graph of composite nodes;
            before 1.2, a Discrete of another dtype than int64).

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> convert_to_gymnasium(Discrete(2), "as_gymnasium_env", "env.action_space")
        Discrete(2)
    """
    target = _gymnasium_spaces(caller)
    source = _VECSPACES
    if isinstance(space, target.Space) and not isinstance(space, source.Space):
        return space
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
    returned unchanged; a vecspaces space is converted to Gymnasium's own classes even while it is an instance
    of one too (see :class:`~vecspaces._space.Space`).

    Args:
        space: a vecspaces space of one of the 10 built-in kinds, or a Gymnasium space.

    Returns:
        The ``gymnasium.spaces.Space``.

    Raises:
        ImportError: gymnasium is not installed.
        InvalidTypeError: ``space`` is not a space of either library.
        CustomSpaceError: ``space`` (or a child of it) is a custom space kind with no Gymnasium counterpart.
        InvalidValueError: the installed Gymnasium cannot build it (before 1.4, a Graph of composite nodes;
            before 1.2, a Discrete of another dtype than int64).

    Example:
        >>> from vecspaces.spaces import Box
        >>> to_gymnasium(Box(0, 1, (2,)))
        Box(0.0, 1.0, (2,), float32)
    """
    return convert_to_gymnasium(space, "to_gymnasium")
