"""The :class:`Space` base class, the seeding rules every space shares, the registry of kinds and the kernel cache.

This module sits below the concrete spaces, with the operations' declarations (``vecspaces._ops``), which
dispatch on :class:`Space`. It is not inside the ``vecspaces.spaces`` package, whose ``__init__`` imports
every concrete space; ``vecspaces.spaces.space`` re-exports the base class under Gymnasium's path.

A *kind* is a space class with its own row of kernels (``vecspaces._kernels.<kind>``): the built-in classes,
each marked with :func:`space_kind`. The registry is the one list of kinds: the support table's columns, the
Gymnasium converters and the package's exports all derive from it (adding a kind is its space module, its
kernel module and one export in ``vecspaces/spaces/__init__.py``). Any other subclass of :class:`Space` is a
*custom space*, which follows the one rule stated in ``vecspaces._ops.support``.

Kernels keep what they compute once per space (a flatten plan, lookup tables) in the space's
cache, ``space._kernel_cache`` (see :func:`cached`), never in attributes of their own on the space.
"""

from __future__ import annotations

import copyreg
import functools
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from vecspaces.error import Error, InvalidTypeError, InvalidValueError, message, show

__all__ = [
    "MaskNDArray",
    "Space",
    "arrays_from_json",
    "derive_seeds",
    "gymnasium_facing_class",
    "make_rng",
    "space_kind",
    "space_kinds",
    "vecspaces_class",
]

T_co = TypeVar("T_co", covariant=True)
K = TypeVar("K", bound="type[Space[Any]]")
S = TypeVar("S", bound="Space[Any]")
V = TypeVar("V")
J = TypeVar("J", bound=Callable[..., list[Any]])

MaskNDArray = npt.NDArray[np.int8]


def make_rng(seed: int | None = None) -> tuple[np.random.Generator, int]:
    """Create a random generator from a seed and return it with the seed that reproduces it.

    Args:
        seed: a non-negative integer (Python or NumPy, not bool), or ``None`` for fresh OS entropy.

    Returns:
        ``(generator, entropy)``: feeding ``entropy`` back gives a generator in the same state.

    Raises:
        InvalidTypeError: ``seed`` is not an integer or None.
        InvalidValueError: ``seed`` is negative.

    Example:
        >>> rng, entropy = make_rng(3)
        >>> entropy, make_rng(entropy)[0].integers(100) == rng.integers(100)
        (3, True)
    """
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise InvalidTypeError(
                message("seed has the wrong type", expected="a non-negative int or None", got=show(seed))
            )
        if seed < 0:
            raise InvalidValueError(
                message("seed must not be negative", expected="a non-negative int or None", got=show(seed))
            )
        seed = int(seed)
    sequence = np.random.SeedSequence(seed)
    entropy = sequence.entropy
    assert isinstance(entropy, int)  # SeedSequence keeps the int it was given, or draws one
    return np.random.Generator(np.random.PCG64(sequence)), entropy


def derive_seeds(seed: int, count: int) -> list[int]:
    """Derive ``count`` independent child seeds from one integer seed, deterministically.

    Composite spaces use this so that children of an int-seeded space never share a random stream,
    even when they are identical spaces.

    Example:
        >>> a, b = derive_seeds(0, 2)
        >>> a != b and derive_seeds(0, 2) == [a, b]
        True
    """
    words = np.random.SeedSequence(seed).generate_state(count, dtype=np.uint64)
    return [int(word) for word in words]


def json_checked(convert: J) -> J:
    """Make a kind's ``to_jsonable`` or ``from_jsonable`` raise vecspaces' errors for data it cannot convert.

    What the conversion raises itself (``int('a')``, a sample that is not iterable) becomes an
    :class:`~vecspaces.error.InvalidTypeError` (from a ``TypeError`` or ``AttributeError``) or an
    :class:`~vecspaces.error.InvalidValueError` naming the space, with the original error chained.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> Discrete(3).from_jsonable(["a"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        vecspaces.error.InvalidValueError: Discrete(3).from_jsonable cannot convert sample_n (invalid literal ...
    """

    @functools.wraps(convert)
    def checked(self: Space[Any], sample_n: Any) -> list[Any]:
        try:
            return convert(self, sample_n)
        except Error:
            raise
        except (TypeError, AttributeError, ValueError, IndexError, KeyError) as error:
            form = "the form to_jsonable gives" if convert.__name__ == "from_jsonable" else "the space's form"
            text = message(
                f"{self!r}.{convert.__name__} cannot convert sample_n ({error})",
                expected=f"a list of samples in {form}",
                got=show(sample_n),
            )
            kind = InvalidTypeError if isinstance(error, (TypeError, AttributeError)) else InvalidValueError
            raise kind(text) from error

    return checked  # type: ignore[return-value]


def arrays_from_json(space: Space[Any], sample_n: Iterable[Any], dtype: npt.DTypeLike) -> list[npt.NDArray[Any]]:
    """Convert an array kind's JSON samples to arrays of ``dtype``, refusing any not of the space's shape.

    Raises:
        InvalidValueError: a sample's shape is not the space's (it would convert to a value outside the space).

    Example:
        >>> from vecspaces.spaces import MultiBinary
        >>> arrays_from_json(MultiBinary(2), [[0, 1]], np.int8)
        [array([0, 1], dtype=int8)]
    """
    arrays = [np.array(sample, dtype=dtype) for sample in sample_n]
    for index, array in enumerate(arrays):
        if array.shape != space.shape:
            raise InvalidValueError(
                message(
                    f"{space!r}.from_jsonable got sample {index} of shape {array.shape}",
                    expected=f"nested lists of shape {space.shape}, as to_jsonable gives",
                    got=show(array),
                )
            )
    return arrays


class Space(Generic[T_co]):
    """The base class of every space: a set of values with a random sampler.

    A subclass defines ``sample``, ``contains``, ``is_np_flattenable``, ``__eq__`` and ``__repr__``;
    composite subclasses also override ``seed`` so their children are seeded. The ``__eq__`` of a built-in
    kind hands an ``other`` of another kind to :func:`~vecspaces._ops.gymnasium.equals_gymnasium`, so an
    equal Gymnasium space compares equal.

    While Gymnasium is imported, every space made is also an instance of the matching ``gymnasium.spaces`` class
    (:func:`gymnasium_facing_class`), so Gymnasium's own checks and functions accept it.

    Kernel-facing: besides the public API, the kernels (``vecspaces._kernels``) read ``_shape``, the shape as
    stored (hot paths skip the property call), and keep what they precompute in ``_kernel_cache`` (see
    :func:`cached`). Each kind's class lists the few private attributes its kernels read;
    ``tests/test_architecture.py`` holds the kernels to that list.

    Args:
        shape: the shape of the space's values, or None when they have no fixed shape.
        dtype: the dtype of the space's values, or None.
        seed: an int or None to seed the sampler, or a ``numpy.random.Generator`` used as the sampler itself.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> space = Discrete(4, seed=7)
        >>> space.sample() in space
        True
    """

    def __new__(cls: type[S], *args: Any, **kwargs: Any) -> S:
        gymnasium_spaces = sys.modules.get("gymnasium.spaces")
        made = cls if gymnasium_spaces is None else gymnasium_facing_class(cls, gymnasium_spaces)
        return object.__new__(made)

    def __init__(
        self,
        shape: Sequence[int] | None = None,
        dtype: npt.DTypeLike | None = None,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        self._shape = None if shape is None else tuple(shape)
        # What the kernels precompute for this space, by the function that builds it (see cached).
        self._kernel_cache: dict[Callable[[Any], Any], Any] = {}
        self.dtype = None if dtype is None else np.dtype(dtype)
        self._np_random: np.random.Generator | None = None
        if isinstance(seed, np.random.Generator):
            self._np_random = seed
        elif seed is not None:
            self.seed(seed)

    @property
    def np_random(self) -> np.random.Generator:
        """The random generator used by :meth:`sample`, created from fresh entropy on first use."""
        if self._np_random is None:
            self.seed()
        if self._np_random is None:  # a composite's seed() only seeds its children
            self._np_random, _ = make_rng()
        return self._np_random

    @property
    def shape(self) -> tuple[int, ...] | None:
        """The shape of the space's values, or None for spaces without a fixed shape."""
        return self._shape

    @property
    def is_np_flattenable(self) -> bool:
        """Whether ``flatten`` turns this space's values into one fixed-size numpy vector."""
        raise NotImplementedError(f"{type(self).__name__} does not say whether it is flattenable")

    def sample(self, mask: Any | None = None, probability: Any | None = None) -> T_co:
        """Draw a random value of the space.

        Args:
            mask: restricts the values that can be drawn; its form depends on the space.
            probability: gives the probability of each value; its form depends on the space.

        Returns:
            A value that the space contains.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement sample()")

    def contains(self, x: Any) -> bool:
        """Return whether ``x`` is a value of this space. Never raises: odd input answers False."""
        raise NotImplementedError(f"{type(self).__name__} does not implement contains()")

    def __contains__(self, x: Any) -> bool:
        return self.contains(x)

    def seed(self, seed: Any = None) -> Any:
        """Seed the space's random generator.

        Args:
            seed: a non-negative int, or None to draw fresh entropy. Composite spaces also accept a
                structure of seeds matching their children.

        Returns:
            The seed that reproduces the same samples when given back to ``seed``.
        """
        self._np_random, entropy = make_rng(seed)
        return entropy

    def __getstate__(self) -> dict[str, Any]:
        # What the kernels cached on the space is derived, may hold kernels that cannot be pickled, and is
        # rebuilt on first use: copies and pickles go without it.
        state = self.__dict__.copy()
        state.pop("_kernel_cache", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Spaces pickled by old Gymnasium versions used public names for these attributes.
        state = dict(state)
        if "shape" in state:
            state["_shape"] = state.pop("shape")
        if "np_random" in state:
            state["_np_random"] = state.pop("np_random")
        self.__dict__.update(state)
        self._kernel_cache = {}

    @json_checked
    def to_jsonable(self, sample_n: Sequence[Any]) -> list[Any]:
        """Convert a batch (list) of samples to JSON-serialisable data."""
        return list(sample_n)

    @json_checked
    def from_jsonable(self, sample_n: Iterable[Any]) -> list[Any]:
        """Convert JSON data made by :meth:`to_jsonable` back to a list of samples."""
        return list(sample_n)


# The kinds of space by class name: see the module docstring and space_kind.
_KINDS: dict[str, type[Space[Any]]] = {}


def space_kind(cls: K) -> K:
    """Class decorator that makes ``cls`` a kind of space, listed wherever vecspaces lists kinds.

    A kind has a row of kernels of its own (``vecspaces._kernels.<kind>``, registered for the class; its
    subclasses are of the same kind) and a column in the support table, and its kernel module may register
    a Gymnasium converter (``vecspaces._ops.gymnasium.register_converter``). Kinds are named by their
    class name, so two kinds cannot share one.

    Args:
        cls: a subclass of :class:`Space`.

    Returns:
        ``cls`` itself.

    Raises:
        InvalidTypeError: ``cls`` is not a subclass of ``Space``.
        InvalidValueError: another class of the same name is a kind already.

    Example:
        >>> @space_kind
        ... class Coin(Space[int]):
        ...     pass
        >>> Coin in space_kinds()
        True
        >>> _ = _KINDS.pop("Coin")  # doctest only: kinds are not meant to be removed
    """
    if not (isinstance(cls, type) and issubclass(cls, Space)):
        raise InvalidTypeError(message("space_kind needs a space class", expected="a subclass of Space", got=show(cls)))
    known = _KINDS.get(cls.__name__)
    # The same class defined again (a module reloaded) replaces itself; another class may not take the name.
    if known is not None and (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):
        raise InvalidValueError(
            message(
                f"space_kind got a second kind named {cls.__name__}",
                expected="a class name no other kind has",
                got=f"{cls.__module__}.{cls.__qualname__}, while {known.__module__}.{known.__qualname__} is one",
            )
        )
    _KINDS[cls.__name__] = cls
    return cls


def space_kinds() -> tuple[type[Space[Any]], ...]:
    """Every kind of space, sorted by name (an order that does not depend on the order of imports).

    Example:
        >>> [kind.__name__ for kind in space_kinds()]  # doctest: +NORMALIZE_WHITESPACE
        ['Box', 'Dict', 'Discrete', 'Graph', 'MultiBinary', 'MultiDiscrete', 'OneOf', 'Sequence', 'Text',
         'Tuple']
    """
    return tuple(_KINDS[name] for name in sorted(_KINDS))


# A space class -> its subclass that is also the matching Gymnasium class (see gymnasium_facing_class).
_GYMNASIUM_FACING: dict[type, type] = {}


def gymnasium_facing_class(cls: type[S], gymnasium_spaces: Any) -> type[S]:
    """The subclass of space class ``cls`` that also derives from the matching class of ``gymnasium_spaces``.

    A user who swaps ``gymnasium.spaces`` for ``vecspaces.spaces`` in an env module keeps stacking Gymnasium on
    top: ``gymnasium.make``'s env checker, its wrappers and training libraries check
    ``isinstance(space, gymnasium.spaces.Box)`` and call Gymnasium's own functions (``flatten_space``,
    ``batch_space``) on the env's spaces, which only an instance of a Gymnasium class passes. So while
    Gymnasium is imported, :class:`Space` makes each space an instance of this subclass. ``cls`` comes first in
    its method order, so every method and attribute is vecspaces' own; Gymnasium's functions, which read the
    attributes both libraries share (``low``, ``n``, ``spaces``, ...), work on it. The matching Gymnasium class
    is the one named like the nearest kind among ``cls``'s ancestors (``gymnasium.spaces.Space`` for a custom
    space). The subclass keeps the name of ``cls``, so reprs and messages do not change, and pickles as an
    instance of ``cls``, which faces Gymnasium again where it is loaded if Gymnasium is imported there.

    Example:
        >>> import gymnasium
        >>> from vecspaces.spaces import Box
        >>> space = Box(0, 1, (2,))
        >>> isinstance(space, gymnasium.spaces.Box), isinstance(space, Box), type(space).__name__
        (True, True, 'Box')
    """
    facing = _GYMNASIUM_FACING.get(cls)
    if facing is not None:
        return facing
    base = getattr(gymnasium_spaces, "Space", None)
    if base is None or issubclass(cls, base):  # gymnasium.spaces still being imported, or a class facing already
        return cls
    kind = next((ancestor for ancestor in cls.__mro__ if _KINDS.get(ancestor.__name__) is ancestor), None)
    if kind is not None:
        base = getattr(gymnasium_spaces, kind.__name__, base)  # an older Gymnasium may lack a kind
    namespace = {
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
        "__reduce_ex__": _reduce_facing,
        "_faces_gymnasium_for": cls,  # read by vecspaces_class, in this class's own namespace only
    }
    facing = _GYMNASIUM_FACING[cls] = type(cls.__name__, (cls, base), namespace)
    return facing


def vecspaces_class(cls: type[Space[Any]]) -> type[Space[Any]]:
    """The vecspaces class behind space class ``cls``: the class it faces Gymnasium for, or ``cls`` itself.

    Two spaces of one class, one made before Gymnasium was imported and one after, are of two classes; code that
    compares the classes of spaces compares these.

    Example:
        >>> import gymnasium
        >>> from vecspaces.spaces import Box
        >>> vecspaces_class(type(Box(0, 1))) is Box
        True
    """
    plain: type[Space[Any]] = vars(cls).get("_faces_gymnasium_for", cls)
    return plain


def _reduce_facing(self: Space[Any], protocol: Any) -> Any:
    # pickle finds a class by its module and name, which lead to the vecspaces class, not to its facing subclass:
    # reduce the space as an instance of that class, whose __new__ faces Gymnasium again where it is loaded.
    facing = type(self)
    reduced = super(facing, self).__reduce_ex__(protocol)
    if reduced[0] is copyreg.__newobj__ and reduced[1] == (facing,):  # type: ignore[attr-defined]
        return (_new_space, (vecspaces_class(facing),), *reduced[2:])
    if reduced[0] is copyreg._reconstructor and reduced[1][0] is facing:  # type: ignore[attr-defined]
        return (reduced[0], (vecspaces_class(facing), *reduced[1][1:]), *reduced[2:])  # protocols 0 and 1
    return reduced


def _new_space(cls: type[Space[Any]]) -> Space[Any]:
    """An empty space of class ``cls`` (facing Gymnasium if it is imported here), which unpickling then fills."""
    return cls.__new__(cls)


def cached(space: Space[Any], build: Callable[[Any], V], fresh: Callable[[V, Any], bool] | None = None) -> V:
    """``build(space)``, computed once per space and kept in its ``_kernel_cache``: how kernels keep plans.

    The function that builds a value is its key, so two kernels cannot collide: use a module-level function
    or class. The cache is a plain dict created with the space; copies and pickles leave it out, and a space
    changed in place clears it (``Dict.__setitem__``). A call costs a Python function call, so the hottest
    paths read ``space._kernel_cache[build]`` themselves and call this only on a ``KeyError``.

    Args:
        space: the space the value describes.
        build: computes the value from the space; also its key.
        fresh: if given, ``fresh(value, space)`` says whether a cached value still describes ``space`` (a
            container whose children can change); a stale value is built again.

    Returns:
        The cached value.

    Example:
        >>> space = Space(seed=0)
        >>> def plan(space: Space[Any]) -> list[int]:
        ...     print("built")
        ...     return [1, 2]
        >>> cached(space, plan)
        built
        [1, 2]
        >>> cached(space, plan), space._kernel_cache[plan]
        ([1, 2], [1, 2])
    """
    cache = space._kernel_cache
    try:
        value: V = cache[build]
    except KeyError:
        pass
    else:
        if fresh is None or fresh(value, space):
            return value
    value = cache[build] = build(space)
    return value
