"""The base class shared by :class:`~vecspaces.spaces.Dict` and :class:`~vecspaces.spaces.Tuple`.

A container holds child spaces under keys in one fixed order, decided once by the container: a Dict keeps the
order it was built with, a Tuple its positions ``0..n-1``. Seeding, sampling, the JSON form and every kernel in
``vecspaces._kernels.container`` walk the children in that order, never in the order of a value's keys.

They do so through a small protocol that each subclass implements, the *container protocol*, which is the
kernels' (and the stacking helpers') whole view of a container:

- ``child_keys()`` and ``children()``: the keys and the child spaces, in order;
- ``unpack(value, root)``: the parts of a dict- or tuple-shaped value in key order, or an error naming the
  missing or unexpected key, or the wrong length or type, and where the value is (``root``);
- ``pack(parts)``: the dict or tuple made of parts given in key order;
- ``rebuild(children, seed)``: a new container of the same kind and keys holding other children;
- ``path_segment(index)``: how the ``index``-th child's key appears in a path, ``['a']`` or ``[0]``.

Errors inside nested containers name the full path of the offending part, e.g.
``mask['camera'][1]: ...``: a container that catches a child's error re-raises it with its own key prefixed
(:func:`relocate`).

Every composite space (these two, and Sequence, Graph and OneOf) takes its child spaces through
:func:`adopt_child`, which converts a Gymnasium child to its vecspaces form.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import numpy as np

from vecspaces._ops.gymnasium import adopt
from vecspaces._space import Space, derive_seeds, json_checked, make_rng
from vecspaces.error import Error, InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces._masks import reject_both

__all__ = ["Container", "adopt_child", "located", "relocate"]

T = TypeVar("T")

# Attribute of an error raised inside a container: (root, tail, bare message), so that enclosing containers
# can insert their key between the root (``mask``, ``items[3]``) and the tail (``['a'][0]``).
_WHERE = "_vecspaces_where"


def located(kind: type[Error], root: str, problem: str, *, expected: str, got: str) -> Error:
    """Build an error about the value found at ``root``, e.g. ``mask: missing key 'b' of a Dict, ...``.

    Example:
        >>> str(located(InvalidValueError, "seed", "wrong length for a Tuple", expected="2 entries", got="3"))
        'seed: wrong length for a Tuple, expected 2 entries, got 3'
    """
    return _render(kind, root, "", message(problem, expected=expected, got=got))


def adopt_child(value: Any, problem: str, *, expected: str, at: str = "") -> Space[Any]:
    """``value`` as a child space of a composite: itself, or a Gymnasium space converted to vecspaces.

    A Gymnasium space of a built-in kind becomes its vecspaces equivalent, with a copy of its generator; one of
    a custom kind is held in a ``GymnasiumCustomSpace`` (see :func:`vecspaces._ops.gymnasium.adopt`).

    Args:
        value: the child given to the composite's constructor or setter.
        problem: the error message's subject and broken constraint, e.g. ``"Tuple child is not a space"``.
        expected: the form the message says would have been accepted.
        at: where ``value`` is among the constructor's arguments, e.g. ``"spaces[2]"``, or empty.

    Returns:
        The vecspaces space to store.

    Raises:
        InvalidTypeError: ``value`` is a space of neither library; the message is built from the arguments.

    Example:
        >>> import gymnasium
        >>> adopt_child(gymnasium.spaces.Discrete(3), "child is not a space", expected="a space")
        Discrete(3)
        >>> adopt_child("Discrete(3)", "child is not a space", expected="a space", at="spaces[0]")
        Traceback (most recent call last):
        ...
        vecspaces.error.InvalidTypeError: child is not a space, expected a space, got 'Discrete(3)' (str) at spaces[0]
    """
    space = adopt(value)
    if space is None:
        raise InvalidTypeError(message(problem, expected=expected, got=show(value), at=at))
    return space


def relocate(error: Error, segment: str, root: str) -> Error:
    """Return ``error``, raised by a child, with the child's key ``segment`` added to the path it names.

    Args:
        error: what the child raised.
        segment: the child's key as it appears in a path, ``"['a']"`` or ``"[0]"``.
        root: where the path starts when the child's error names no path itself (a leaf space's error),
            e.g. ``"mask"`` or ``"x"``.

    Returns:
        An error of the same type whose message starts with the full path, carrying the original traceback.

    Example:
        >>> inner = located(InvalidValueError, "mask", "missing key 'c' of a Dict", expected="c", got="b")
        >>> str(relocate(inner, "['a']", "mask"))
        "mask['a']: missing key 'c' of a Dict, expected c, got b"
    """
    where = getattr(error, _WHERE, None)
    if where is None:
        root, tail, bare = root, "", str(error)
    else:
        root, tail, bare = where
    try:
        moved = _render(type(error), root, segment + tail, bare)
    except Exception:  # an error class with another constructor: keep it as it is
        return error
    return moved.with_traceback(error.__traceback__)


def _render(kind: type[Error], root: str, tail: str, bare: str) -> Error:
    error = kind(f"{root}{tail}: {bare}")
    setattr(error, _WHERE, (root, tail, bare))
    return error


class Container(Space[T]):
    """A space made of child spaces under ordered keys; the common part of Dict and Tuple.

    The container's own generator is used only to derive seeds and as the starting state of batched
    spaces; samples come from the children's generators. The methods of the container protocol (module
    docstring) are what the kernels use.

    Attributes:
        spaces: the children: a dict for Dict, a tuple for Tuple. A kernel that caches anything derived from
            them (in ``_kernel_cache``, see ``vecspaces._space.cached``) checks that they are still the same
            objects, since a Dict can be changed in place.
    """

    spaces: Any

    # The types a dict- or tuple-shaped argument (seed, mask, probability) may have, and how to name them.
    _structure_types: tuple[type, ...] = ()

    def child_keys(self) -> Sequence[Any]:
        """The children's keys, in the container's order: a Dict's keys, a Tuple's positions."""
        raise NotImplementedError

    def children(self) -> Sequence[Space[Any]]:
        """The child spaces, in the container's order."""
        raise NotImplementedError

    def pack(self, parts: Iterable[Any]) -> T:
        """The dict or tuple made of ``parts``, given in the container's order."""
        raise NotImplementedError

    def unpack(self, value: Any, root: str) -> Sequence[Any]:
        """The parts of a dict- or tuple-shaped ``value`` in the container's order.

        Raises:
            InvalidTypeError: ``value`` has the wrong type; the message names ``root``, where the value is.
            InvalidValueError: ``value`` misses a key, has one too many, or has the wrong length.
        """
        raise NotImplementedError

    def rebuild(self, children: Iterable[Space[Any]], seed: np.random.Generator | None = None) -> Container[T]:
        """A new container of the same kind and keys holding ``children`` (given in the container's order)."""
        raise NotImplementedError

    def path_segment(self, index: int) -> str:
        """The key of the ``index``-th child as it appears in a path: ``['a']`` or ``[0]``.

        Example:
            >>> from vecspaces.spaces import Dict, Discrete, Tuple
            >>> Dict(a=Discrete(2)).path_segment(0), Tuple((Discrete(2),)).path_segment(0)
            ("['a']", '[0]')
        """
        return f"[{self.child_keys()[index]!r}]"

    @property
    def np_random(self) -> np.random.Generator:
        """The container's own generator, created from fresh entropy on first use.

        Unlike Gymnasium, creating it never reseeds the children: a child seeded on its own keeps its stream.

        Example:
            >>> from vecspaces.spaces import Discrete, Tuple
            >>> child = Discrete(10, seed=1)
            >>> _ = Tuple((child,)).np_random
            >>> bool(child.sample() == Discrete(10, seed=1).sample())
            True
        """
        if self._np_random is None:
            self._np_random, _ = make_rng()
        return self._np_random

    @property
    def is_np_flattenable(self) -> bool:
        """Whether every child flattens to a fixed-size array (no Sequence or Graph inside).

        Example:
            >>> from vecspaces.spaces import Dict, Discrete, Sequence
            >>> Dict(a=Discrete(2)).is_np_flattenable, Dict(a=Sequence(Discrete(2))).is_np_flattenable
            (True, False)
        """
        return all(child.is_np_flattenable for child in self.children())

    def seed(self, seed: Any = None) -> Any:
        """Seed the children's generators.

        Args:
            seed: ``None`` lets every child seed itself from fresh entropy. An int seeds the container's own
                generator and gives each child an independent seed derived from it, so identical children
                draw different streams. A structure matching the container (a dict with the same keys for a
                Dict, a tuple or list of the same length for a Tuple) gives each child its own seed; it may
                nest for nested containers.

        Returns:
            The structure of the children's returned seeds; passing it back to ``seed`` reproduces the same
            samples.

        Raises:
            InvalidTypeError: the seed, or a part of it, has the wrong type.
            InvalidValueError: a structure has the wrong keys or length, or an int is negative.

        Example:
            >>> from vecspaces.spaces import Discrete, Tuple
            >>> space = Tuple((Discrete(100), Discrete(100)))
            >>> seeds = space.seed(0)
            >>> first = space.sample()
            >>> _ = space.seed(seeds)
            >>> space.sample() == first
            True
        """
        children = self.children()
        if seed is None:
            parts: Sequence[Any] = [None] * len(children)
        elif isinstance(seed, (int, np.integer)):
            self._np_random, entropy = make_rng(seed if isinstance(seed, int) else int(seed))
            parts = derive_seeds(entropy, len(children))
        elif isinstance(seed, self._structure_types):
            parts = self.unpack(seed, "seed")
        else:
            raise InvalidTypeError(
                message(
                    f"{type(self).__name__} seed has the wrong type",
                    expected=f"an int, None or {self._structure_name()} of per-child seeds",
                    got=show(seed),
                )
            )
        returned: list[Any] = []
        try:
            for child, part in zip(children, parts, strict=True):
                returned.append(child.seed(part))
        except Error as error:
            raise relocate(error, self.path_segment(len(returned)), "seed") from None
        return self.pack(returned)

    def _structure_name(self) -> str:
        raise NotImplementedError

    def _sample_each(self, mask: Any, probability: Any) -> T:
        """Sample every child with its part of ``mask`` or ``probability`` (the structured, slower path)."""
        reject_both(type(self).__name__, mask, probability)
        name, argument = ("mask", mask) if mask is not None else ("probability", probability)
        parts = self.unpack(argument, name)
        values: list[Any] = []
        try:
            for child, part in zip(self.children(), parts, strict=True):
                if name == "mask":
                    values.append(child.sample(mask=part))
                else:
                    values.append(child.sample(probability=part))
        except Error as error:
            raise relocate(error, self.path_segment(len(values)), name) from None
        return self.pack(values)

    @json_checked
    def to_jsonable(self, sample_n: Sequence[Any]) -> Any:
        """Convert a batch of samples to JSON data, column-wise: one entry per child holding its column.

        Example:
            >>> import numpy as np
            >>> from vecspaces.spaces import Dict, Discrete
            >>> Dict(a=Discrete(3)).to_jsonable([{"a": np.int64(1)}, {"a": np.int64(2)}])
            {'a': [1, 2]}
        """
        rows = [self.unpack(sample, f"sample_n[{index}]") for index, sample in enumerate(sample_n)]
        columns: list[Any] = []
        try:
            for index, child in enumerate(self.children()):
                columns.append(child.to_jsonable([row[index] for row in rows]))
        except Error as error:
            raise relocate(error, self.path_segment(len(columns)), "sample_n") from None
        return self.pack(columns)

    @json_checked
    def from_jsonable(self, sample_n: Any) -> list[T]:
        """Convert JSON data made by :meth:`to_jsonable` back to a list of samples.

        Example:
            >>> from vecspaces.spaces import Dict, Discrete
            >>> Dict(a=Discrete(3)).from_jsonable({"a": [1, 2]})
            [{'a': 1}, {'a': 2}]
        """
        parts = self.unpack(sample_n, "sample_n")
        columns: list[list[Any]] = []
        try:
            for child, part in zip(self.children(), parts, strict=True):
                columns.append(list(child.from_jsonable(part)))
        except Error as error:
            raise relocate(error, self.path_segment(len(columns)), "sample_n") from None
        lengths = {len(column) for column in columns}
        if len(lengths) > 1:
            raise InvalidValueError(
                message(
                    f"{type(self).__name__}.from_jsonable got columns of different lengths",
                    expected="one entry per sample in every column",
                    got=f"lengths {[len(column) for column in columns]}",
                )
            )
        return [self.pack(row) for row in zip(*columns, strict=True)]
