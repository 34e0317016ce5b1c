"""The :class:`Dict` space: named child spaces in a fixed key order."""

from __future__ import annotations

import typing
from collections import OrderedDict
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from collections.abc import Sequence as SequenceABC
from typing import Any, cast

import numpy as np

from vecspaces._ops.gymnasium import equals_gymnasium, is_gymnasium_space
from vecspaces._space import Space, space_kind
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces._container import Container, adopt_child, located

__all__ = ["Dict"]


@space_kind
class Dict(Container[dict[str, Any]], typing.Mapping[str, Space[Any]]):
    """A dictionary of spaces: its values are dicts holding one value of each child space under its key.

    The key order is decided once, when the space is built, and every operation (sampling, flattening,
    batching) follows it:

    - an ``OrderedDict`` or another ``Dict`` space (vecspaces' or Gymnasium's) keeps its order;
    - any other mapping is sorted by key, as Gymnasium does for backward compatibility, unless the keys are
      not comparable (or ``sort_keys=False``), in which case it keeps its insertion order;
    - a sequence of ``(key, space)`` pairs keeps its order;
    - keyword arguments are appended after ``spaces``, in the order given.

    Args:
        spaces: a mapping or a sequence of ``(key, space)`` pairs, or None; Gymnasium spaces (children, or a
            Gymnasium Dict as the whole mapping) are converted to vecspaces.
        seed: an int, None, a dict of per-key seeds, or a ``numpy.random.Generator`` used as the space's own
            generator (see :meth:`seed`).
        sort_keys: whether to sort the keys of a plain mapping.
        **spaces_kwargs: more children, by keyword (Gymnasium spaces converted too).

    Raises:
        InvalidTypeError: ``spaces`` is neither a mapping nor a sequence of pairs, or a child is not a space of
            either library.
        InvalidValueError: a key is given twice.

    Example:
        >>> from vecspaces.spaces import Box, Dict, Discrete
        >>> space = Dict({"position": Box(-1.0, 1.0, (2,)), "color": Discrete(3)}, seed=42)
        >>> space
        Dict('color': Discrete(3), 'position': Box(-1.0, 1.0, (2,), float32))
        >>> sorted(space.sample())
        ['color', 'position']
        >>> list(Dict(b=Discrete(2), a=Discrete(3)))
        ['b', 'a']
    """

    spaces: dict[str, Space[Any]]
    _structure_types = (Mapping,)

    def __init__(
        self,
        spaces: Mapping[str, Space[Any]] | SequenceABC[tuple[str, Space[Any]]] | None = None,
        seed: int | Mapping[str, Any] | np.random.Generator | None = None,
        *,
        sort_keys: bool = True,
        **spaces_kwargs: Space[Any],
    ) -> None:
        self.sort_keys = sort_keys
        children = _ordered_children(spaces, sort_keys)
        for key, space in spaces_kwargs.items():
            if key in children:
                raise InvalidValueError(
                    message(
                        f"Dict key {key!r} is given twice",
                        expected="each key either in spaces or as a keyword argument",
                        got=f"{key!r} in both",
                    )
                )
            children[key] = space
        self.spaces = {key: _adopt(key, space) for key, space in children.items()}
        super().__init__(None, None, cast(Any, seed))  # seed() also takes per-key seeds

    # The container protocol (see vecspaces.spaces._container).

    def child_keys(self) -> tuple[Any, ...]:
        """The keys, in the space's order."""
        return tuple(self.spaces)

    def children(self) -> tuple[Space[Any], ...]:
        """The child spaces, in key order."""
        return tuple(self.spaces.values())

    def pack(self, parts: Iterable[Any]) -> dict[str, Any]:
        """The dict of ``parts`` under the keys, in key order."""
        return dict(zip(self.spaces, parts, strict=True))

    def unpack(self, value: Any, root: str) -> list[Any]:
        """The values of a dict under the space's keys, in key order; see ``Container.unpack``."""
        spaces = self.spaces
        if type(value) is dict and len(value) == len(spaces):
            try:
                return [value[key] for key in spaces]
            except KeyError:
                pass
        expected = f"a dict with exactly the keys {list(spaces)}"
        if not isinstance(value, Mapping):
            raise located(InvalidTypeError, root, "wrong type for a Dict", expected=expected, got=show(value))
        missing = [key for key in spaces if key not in value]
        if missing:
            raise located(
                InvalidValueError,
                root,
                f"missing key{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))} of a Dict",
                expected=expected,
                got=f"the keys {list(value)}",
            )
        unexpected = [key for key in value if key not in spaces]
        if unexpected:
            raise located(
                InvalidValueError,
                root,
                f"unexpected key{'s' if len(unexpected) > 1 else ''} {', '.join(map(repr, unexpected))} for a Dict",
                expected=expected,
                got=f"the keys {list(value)}",
            )
        return [value[key] for key in spaces]

    def rebuild(self, children: Iterable[Space[Any]], seed: np.random.Generator | None = None) -> Dict:
        """A Dict of the same keys (and ``sort_keys``) holding ``children``."""
        return Dict(list(zip(self.spaces, children, strict=True)), seed=seed, sort_keys=self.sort_keys)

    def _structure_name(self) -> str:
        return "a dict"

    # Space behaviour.

    def sample(
        self, mask: Mapping[str, Any] | None = None, probability: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Draw a dict holding one sample of each child.

        Args:
            mask: a dict with exactly the space's keys, holding each child's mask (or None).
            probability: a dict with exactly the space's keys, holding each child's probability (or None).

        Returns:
            A dict in the space's key order.

        Raises:
            InvalidValueError: both ``mask`` and ``probability`` are given, or one has the wrong keys.
            InvalidTypeError: ``mask`` or ``probability`` is not a dict.

        Example:
            >>> import numpy as np
            >>> from vecspaces.spaces import Dict, Discrete
            >>> space = Dict(a=Discrete(3), b=Discrete(3), seed=0)
            >>> space.sample(mask={"a": np.array([0, 0, 1], dtype=np.int8), "b": None})["a"]
            2
        """
        if mask is None and probability is None:
            return {key: space.sample() for key, space in self.spaces.items()}
        return self._sample_each(mask, probability)

    def contains(self, x: Any) -> bool:
        """Return whether ``x`` is a dict with exactly the space's keys whose values the children contain.

        Example:
            >>> import numpy as np
            >>> from vecspaces.spaces import Dict, Discrete
            >>> space = Dict(a=Discrete(3))
            >>> space.contains({"a": np.int64(2)}), space.contains({"a": np.int64(2), "b": np.int64(0)})
            (True, False)
        """
        if not isinstance(x, dict):
            return False
        try:  # a dict subclass's len() or [] may raise too
            if len(x) != len(self.spaces):
                return False
            for key, space in self.spaces.items():
                if not space.contains(x[key]):
                    return False
        except Exception:  # a missing key or a child that chokes on odd input: not a member
            return False
        return True

    # Mapping protocol.

    def __getitem__(self, key: str) -> Space[Any]:
        return self.spaces[key]

    def __setitem__(self, key: str, value: Space[Any]) -> None:
        """Set the child under ``key`` (a Gymnasium space is converted to vecspaces).

        Example:
            >>> from vecspaces.spaces import Dict, Discrete
            >>> space = Dict(a=Discrete(2))
            >>> space["b"] = Discrete(3)
            >>> space
            Dict('a': Discrete(2), 'b': Discrete(3))
        """
        self.spaces[key] = _adopt(key, value)
        self._kernel_cache.clear()  # what the kernels derived from the children

    def __iter__(self) -> Iterator[str]:
        return iter(self.spaces)

    def __len__(self) -> int:
        return len(self.spaces)

    def keys(self) -> KeysView[str]:
        """The keys, in the space's order.

        Example:
            >>> from vecspaces.spaces import Dict, Discrete
            >>> list(Dict(b=Discrete(2), a=Discrete(2)).keys())
            ['b', 'a']
        """
        return self.spaces.keys()

    def items(self) -> ItemsView[str, Space[Any]]:
        """The ``(key, child space)`` pairs, in the space's order.

        Example:
            >>> from vecspaces.spaces import Dict, Discrete
            >>> list(Dict(a=Discrete(2)).items())
            [('a', Discrete(2))]
        """
        return self.spaces.items()

    def values(self) -> ValuesView[Space[Any]]:
        """The child spaces, in the space's order.

        Example:
            >>> from vecspaces.spaces import Dict, Discrete
            >>> list(Dict(a=Discrete(2)).values())
            [Discrete(2)]
        """
        return self.spaces.values()

    def __eq__(self, other: object) -> bool:
        # As Gymnasium: plain dict equality, which ignores the key order.
        if not isinstance(other, Dict):
            return equals_gymnasium(self, other)
        return self.spaces == other.spaces

    def __repr__(self) -> str:
        return "Dict(" + ", ".join(f"{key!r}: {space}" for key, space in self.spaces.items()) + ")"

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if "sort_keys" not in self.__dict__:  # pickled by a Gymnasium version without sort_keys
            self.sort_keys = True


def _adopt(key: Any, space: Any) -> Space[Any]:
    """The child ``space`` given under ``key``, a Gymnasium space converted; an error for a non-space."""
    return adopt_child(space, f"Dict child {key!r} is not a space", expected="a Space instance")


def _ordered_children(spaces: Any, sort_keys: bool) -> dict[Any, Any]:
    """The children of ``spaces`` as a plain dict in the order the Dict space will keep."""
    if spaces is None:
        return {}
    if isinstance(spaces, (OrderedDict, Dict)) or is_gymnasium_space(spaces):  # a Dict space keeps its order
        return dict(spaces.items())
    if isinstance(spaces, Mapping):
        if sort_keys:
            try:
                return {key: spaces[key] for key in sorted(spaces)}
            except TypeError:  # keys that cannot be compared keep their insertion order
                pass
        return dict(spaces.items())
    if isinstance(spaces, SequenceABC) and not isinstance(spaces, (str, bytes)):
        children: dict[Any, Any] = {}
        for index, pair in enumerate(spaces):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise InvalidTypeError(
                    message(
                        "Dict spaces entry is not a (key, space) pair",
                        expected="a sequence of (key, space) pairs",
                        got=show(pair),
                        at=f"spaces[{index}]",
                    )
                )
            key, space = pair
            if key in children:
                raise InvalidValueError(
                    message(
                        f"Dict key {key!r} is given twice",
                        expected="distinct keys",
                        got=f"{key!r} again",
                        at=f"spaces[{index}]",
                    )
                )
            children[key] = space
        return children
    raise InvalidTypeError(
        message(
            "Dict spaces has the wrong type",
            expected="a mapping of keys to spaces, a sequence of (key, space) pairs, or None",
            got=show(spaces),
        )
    )
