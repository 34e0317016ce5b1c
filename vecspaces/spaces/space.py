"""The :class:`Space` base class and the seeding rules every space shares."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from vecspaces.error import Error, InvalidTypeError, InvalidValueError, message, show

__all__ = ["MaskNDArray", "Space", "derive_seeds", "equals_gymnasium", "make_rng"]

T_co = TypeVar("T_co", covariant=True)

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


def equals_gymnasium(space: Space[Any], other: object) -> bool:
    """Whether ``other`` is a Gymnasium space equal to ``space`` by value; False for anything else.

    The ``__eq__`` of every built-in kind calls this where ``other`` is not of its own kind, so it costs
    nothing when two vecspaces spaces are compared. A Gymnasium space is converted with
    :func:`~vecspaces.spaces.from_gymnasium` and compared by the vecspaces rules of ``space``'s kind, nested
    spaces included; one that has no vecspaces form (a custom Gymnasium kind) equals no vecspaces space.
    Gymnasium is never imported here: if it was not imported, ``other`` cannot be one of its spaces.

    Equality is asymmetric between the libraries: ``gymnasium_space == vecspaces_space`` is decided by
    Gymnasium's ``__eq__``, which answers False for a space of another library instead of returning
    ``NotImplemented``, so Python never asks vecspaces. Put the vecspaces space on the left, or convert one
    side first.

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
        False
    """
    gymnasium_spaces = sys.modules.get("gymnasium.spaces")
    if gymnasium_spaces is None or not isinstance(other, gymnasium_spaces.Space):
        return False
    from vecspaces.spaces._gymnasium import convert_from_gymnasium  # a layer above: it builds concrete spaces

    try:
        converted = convert_from_gymnasium(other, "==", "other")
    except Error:  # a custom Gymnasium kind, or parameters no vecspaces space takes: nothing here equals it
        return False
    return bool(space.__eq__(converted))


class Space(Generic[T_co]):
    """The base class of every space: a set of values with a random sampler.

    A subclass defines ``sample``, ``contains``, ``is_np_flattenable``, ``__eq__`` and ``__repr__``;
    composite subclasses also override ``seed`` so their children are seeded. The ``__eq__`` of a built-in
    kind hands an ``other`` of another kind to :func:`equals_gymnasium`, so an equal Gymnasium space compares
    equal (when the vecspaces space is on the left).

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

    def __init__(
        self,
        shape: Sequence[int] | None = None,
        dtype: npt.DTypeLike | None = None,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        self._shape = None if shape is None else tuple(shape)
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

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Spaces pickled by old Gymnasium versions used public names for these attributes.
        state = dict(state)
        if "shape" in state:
            state["_shape"] = state.pop("shape")
        if "np_random" in state:
            state["_np_random"] = state.pop("np_random")
        self.__dict__.update(state)

    def to_jsonable(self, sample_n: Sequence[Any]) -> list[Any]:
        """Convert a batch (list) of samples to JSON-serialisable data."""
        return list(sample_n)

    def from_jsonable(self, sample_n: Iterable[Any]) -> list[Any]:
        """Convert JSON data made by :meth:`to_jsonable` back to a list of samples."""
        return list(sample_n)
