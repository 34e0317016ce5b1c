"""The one catalog of test spaces: every kind, every Box dtype, odd bounds and starts, nested composites.

Entries are factories, so every test gets fresh, unseeded spaces. Ids are short and readable; the property
tests in test_properties.py, the differential tests and the benchmarks all iterate this catalog. It is the one
module of tests/ that scripts import (``scripts/bench_spaces.py``): plain data and helpers, no pytest, and
gymnasium only inside the functions that convert values to its form.

``random_mask`` and ``random_probability`` build a valid mask or probability argument for any space made of the
built-in kinds (the catalog's, and the ones the Hypothesis strategies generate), in every form it takes.
``ODD_VALUES`` and ``HOSTILE_VALUES`` (objects whose dunder methods raise; ``hostile_copy`` makes such copies of
samples) are inputs that ``contains`` must answer without raising.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from tests.helpers import GYMNASIUM_BEFORE_1_4
from vecspaces.error import InvalidValueError
from vecspaces.spaces import (
    Box,
    Dict,
    Discrete,
    Graph,
    GraphInstance,
    MultiBinary,
    MultiDiscrete,
    OneOf,
    Sequence,
    Space,
    Text,
    Tuple,
    to_gymnasium,
)
from vecspaces.vector.utils import batch_space

inf = np.inf

FUNDAMENTAL: dict[str, Callable[[], Space[Any]]] = {
    # Box: every dtype, bounded, half-bounded and unbounded dimensions.
    "box_f32": lambda: Box(0.0, 1.0, (3,), np.float32),
    "box_f64_2d": lambda: Box(-2.5, 3.5, (2, 3), np.float64),
    "box_f16": lambda: Box(-1.0, 1.0, (4,), np.float16),
    "box_scalar": lambda: Box(-1.0, 1.0, (), np.float32),
    "box_bool": lambda: Box(0, 1, (3,), np.bool_),
    "box_int8_full": lambda: Box(-128, 127, (2,), np.int8),
    "box_uint8_image": lambda: Box(0, 255, (4, 4, 3), np.uint8),
    "box_int16": lambda: Box(-300, 300, (2,), np.int16),
    "box_uint16": lambda: Box(0, 60_000, (3,), np.uint16),
    "box_uint32": lambda: Box(0, 4_000_000_000, (2,), np.uint32),
    "box_int64": lambda: Box(-10, 10, (3,), np.int64),
    "box_uint64_big": lambda: Box(0, 2**64 - 1, (2,), np.uint64),
    "box_unbounded": lambda: Box(-inf, inf, (2,), np.float32),
    "box_below": lambda: Box(0.0, inf, (2,), np.float64),
    "box_above": lambda: Box(-inf, 0.0, (2,), np.float32),
    "box_mixed": lambda: Box(np.array([-inf, 0.0, -1.0]), np.array([inf, inf, 1.0]), dtype=np.float64),
    "box_int_inf": lambda: Box(-inf, inf, (2,), np.int32),
    "box_int32_below": lambda: Box(-10, inf, (2,), np.int32),
    # Discrete: zero, positive and negative start, narrow dtypes.
    "discrete_2": lambda: Discrete(2),
    "discrete_1": lambda: Discrete(1),
    "discrete_start3": lambda: Discrete(5, start=3),
    "discrete_neg": lambda: Discrete(4, start=-2),
    "discrete_int32": lambda: Discrete(3, dtype=np.int32),
    "discrete_uint8": lambda: Discrete(200, start=10, dtype=np.uint8),
    # MultiBinary and MultiDiscrete.
    "multibinary_5": lambda: MultiBinary(5),
    "multibinary_2d": lambda: MultiBinary((2, 3)),
    "multidiscrete": lambda: MultiDiscrete([2, 3, 4]),
    "multidiscrete_2d": lambda: MultiDiscrete([[2, 3], [4, 5]]),
    "multidiscrete_start": lambda: MultiDiscrete([3, 2], start=[-1, 5]),
    "multidiscrete_int8": lambda: MultiDiscrete([101, 101, 101, 101], dtype=np.int8),
    # Text: default charset, empty strings allowed, unicode charsets, a set charset (sorted).
    "text": lambda: Text(5),
    "text_min0": lambda: Text(8, min_length=0),
    "text_greek": lambda: Text(4, charset="αβγδ"),
    "text_unicode": lambda: Text(6, min_length=2, charset="日本語🙂é"),
    "text_set": lambda: Text(3, charset={"z", "a", "m"}),
}

COMPOSITE: dict[str, Callable[[], Space[Any]]] = {
    "tuple": lambda: Tuple((Discrete(2), Box(0.0, 1.0, (2,)))),
    "tuple_twins": lambda: Tuple((Discrete(5), Discrete(5), Discrete(5))),
    "tuple_nested": lambda: Tuple((Tuple((Discrete(3, start=-1), MultiBinary(2))), Box(-1, 1, (2,), np.int8))),
    "dict": lambda: Dict(a=Box(0.0, 1.0, (2,)), b=Discrete(3)),
    "dict_ordered": lambda: Dict(OrderedDict([("z", Discrete(2)), ("a", MultiDiscrete([2, 2]))])),
    "dict_nested": lambda: Dict(
        position=Box(-1.0, 1.0, (3,)),
        inner=Dict(flag=MultiBinary(3), mode=Discrete(4, start=1)),
        pair=Tuple((Discrete(2), Text(3, charset="ab"))),
    ),
    "dict_mixed_dtypes": lambda: Dict(f=Box(0.0, 1.0, (2,), np.float32), i=Box(0, 9, (2,), np.int64)),
    "sequence": lambda: Sequence(Discrete(3)),
    "sequence_stack_box": lambda: Sequence(Box(0.0, 1.0, (2,)), stack=True),
    "sequence_stack_dict": lambda: Sequence(Dict(x=Box(-1.0, 1.0, (2,)), k=Discrete(4)), stack=True),
    "sequence_of_tuple": lambda: Sequence(Tuple((Discrete(2), Text(2, charset="xy")))),
    "sequence_of_sequence": lambda: Sequence(Sequence(Discrete(3, start=-1))),
    "sequence_of_graph": lambda: Sequence(Graph(Discrete(3), Box(0.0, 1.0, (1,)))),
    "graph": lambda: Graph(Box(0.0, 1.0, (3,)), Discrete(4)),
    "graph_no_edges": lambda: Graph(Discrete(5), None),
    "graph_box_edges": lambda: Graph(Box(-1.0, 1.0, (2,)), Box(0.0, 1.0, (1,))),
    "graph_dict_nodes": lambda: Graph(Dict(p=Box(0.0, 1.0, (2,)), k=Discrete(3, start=1)), MultiBinary(2)),
    "graph_oneof_nodes": lambda: Graph(OneOf((Discrete(3), Box(-1.0, 1.0, (2,)))), Discrete(2)),
    "oneof": lambda: OneOf((Discrete(2), Box(-1.0, 1.0, (2,)))),
    "oneof_mixed": lambda: OneOf((MultiDiscrete([2, 3]), Box(0, 5, (4,), np.int16), Text(2, charset="pq"))),
    "oneof_composite": lambda: OneOf(
        (Dict(a=Discrete(3), b=Box(0.0, 1.0, (2,))), Tuple((MultiBinary(2), Discrete(2, start=-1))))
    ),
    "dict_with_variable": lambda: Dict(
        seq=Sequence(Box(0.0, 1.0, (2,))),
        graph=Graph(Discrete(3), Discrete(2)),
        choice=OneOf((Discrete(3), MultiBinary(2))),
    ),
    "tuple_of_oneof_sequence": lambda: Tuple((OneOf((Discrete(2), Discrete(3))), Sequence(Discrete(2)))),
}

CATALOG: dict[str, Callable[[], Space[Any]]] = {**FUNDAMENTAL, **COMPOSITE}
IDS = list(CATALOG)


# Values no space contains, for ``contains`` to answer False without raising.
ODD_VALUES: list[Any] = [None, "x", 1.5, object(), np.zeros((7, 7, 7)), (), {}, [None], np.array(["a"]), float("nan")]


def make(space_id: str) -> Space[Any]:
    """A fresh instance of the catalog space ``space_id``."""
    return CATALOG[space_id]()


def _gymnasium_builds(space_id: str) -> bool:
    try:
        to_gymnasium(make(space_id))
    except InvalidValueError:  # the installed Gymnasium refuses it (test_gymnasium_interop checks the message)
        return False
    return True


# The catalog spaces the installed Gymnasium can build: all of them from 1.4 on. Before, a Graph's node and edge
# spaces are Box or Discrete only, and before 1.2 a Discrete is int64 only.
GYMNASIUM_IDS = [space_id for space_id in IDS if not GYMNASIUM_BEFORE_1_4 or _gymnasium_builds(space_id)]


def is_variable(space: Space[Any]) -> bool:
    """Whether ``space`` contains a Sequence or Graph anywhere (no fixed-size flat form)."""
    return not space.is_np_flattenable


def random_mask(space: Space[Any], rng: np.random.Generator) -> Any:
    """A valid, randomly chosen ``mask`` argument for ``space.sample``, in any of the forms the space takes.

    Graph masks are for the default ``num_nodes=10`` (and no ``num_edges``): a node mask of
    ``batch_space(node_space, 10)`` and the mask of one edge.
    """
    return _random_argument(space, rng, "mask")


def random_probability(space: Space[Any], rng: np.random.Generator) -> Any:
    """A valid, randomly chosen ``probability`` argument for ``space.sample``, in any form the space takes.

    Graph probabilities are for the default ``num_nodes=10``, as in :func:`random_mask`.
    """
    return _random_argument(space, rng, "probability")


GRAPH_SAMPLE_NODES = 10  # what Graph.sample draws when num_nodes is not given


def _random_argument(space: Space[Any], rng: np.random.Generator, kind: str) -> Any:
    """A random valid ``mask`` (``kind="mask"``) or ``probability`` argument for ``space.sample``."""
    masking = kind == "mask"

    def leaf(n: int, at_least_one: bool = False) -> np.ndarray:
        return _random_bits(rng, (n,), at_least_one) if masking else _random_distribution(rng, n)

    def maybe(argument: Callable[[], Any], none_chance: float = 0.25) -> Any:
        """``argument()``, or sometimes None (every composite argument may leave a part free)."""
        return None if rng.random() < none_chance else argument()

    if isinstance(space, Box):
        return None
    if isinstance(space, Discrete):
        return leaf(int(space.n))
    if isinstance(space, MultiBinary):
        return rng.integers(0, 3, size=space.shape, dtype=np.int8) if masking else rng.random(space.shape)
    if isinstance(space, MultiDiscrete):
        return _nested_leaves(space.nvec, lambda n: leaf(int(n)))
    if isinstance(space, Text):
        # (length, chars), (None, chars) or (length, None); an all-zero mask only where "" is allowed.
        form = int(rng.integers(3))
        length = None if form == 1 else int(rng.integers(space.min_length, space.max_length + 1))
        chars = None if form == 2 else leaf(len(space.character_list), at_least_one=space.min_length > 0)
        return (length, chars)
    if isinstance(space, Tuple):
        return tuple(maybe(lambda child=child: _random_argument(child, rng, kind)) for child in space)
    if isinstance(space, Dict):
        return {key: maybe(lambda child=child: _random_argument(child, rng, kind)) for key, child in space.items()}
    if isinstance(space, Sequence):
        # The length as an int, an array of allowed lengths, or None (geometric).
        form = int(rng.integers(3))
        length: int | np.ndarray | None = None
        if form == 0:
            length = int(rng.integers(0, 4))
        elif form == 1:
            length = rng.integers(0, 4, size=int(rng.integers(1, 4)))
        return (length, maybe(lambda: _random_argument(space.feature_space, rng, kind)))
    if isinstance(space, OneOf):
        return tuple(maybe(lambda child=child: _random_argument(child, rng, kind)) for child in space)
    if isinstance(space, Graph):
        nodes = batch_space(space.node_space, GRAPH_SAMPLE_NODES)
        edge_space = space.edge_space
        edges = None
        if edge_space is not None and _replicates_per_item(edge_space):
            edges = maybe(lambda: _random_argument(edge_space, rng, kind))
        return (maybe(lambda: _random_argument(nodes, rng, kind)), edges)
    raise AssertionError(f"no {kind} rule for {space}")


def _replicates_per_item(space: Space[Any]) -> bool:
    """Whether a batch of ``space`` takes one mask per item, so Graph.sample can repeat one edge's mask.

    Without ``num_edges`` Graph.sample (Gymnasium's too) passes ``(edge_mask,) * num_edges`` to the batched edge
    space. Only a Discrete (batched as a MultiDiscrete) and the kinds batched as a Tuple of copies take that;
    a Box, MultiBinary or MultiDiscrete batches to a Box, and Dict and Tuple batch child by child.
    """
    return isinstance(space, Discrete) or (
        isinstance(batch_space(space, 2), Tuple) and not isinstance(space, (Tuple, Dict))
    )


def _random_bits(rng: np.random.Generator, shape: tuple[int, ...], at_least_one: bool = False) -> np.ndarray:
    """Random 0/1 int8 entries; with ``at_least_one``, never all zero."""
    bits = rng.integers(0, 2, size=shape, dtype=np.int8)
    if at_least_one and not bits.any():
        bits[rng.integers(shape[0])] = 1
    return bits


def _random_distribution(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random probability vector of length ``n`` in which some entries are often 0."""
    weights = rng.random(n) * (rng.random(n) < 0.7)  # some values get probability 0
    if weights.sum() == 0:
        weights[rng.integers(n)] = 1.0
    return weights / weights.sum()


def _nested_leaves(nvec: np.ndarray, leaf: Callable[[int], Any]) -> Any:
    """``leaf(n)`` for every entry of ``nvec``, nested in tuples as ``nvec``'s axes are (MultiDiscrete masks)."""
    if nvec.ndim == 1:
        return tuple(leaf(n) for n in nvec)
    return tuple(_nested_leaves(row, leaf) for row in nvec)


def scalars_as_arrays(value: Any) -> Any:
    """``value`` with every numpy scalar turned into a 0-d array of its dtype (in tuples, lists, dicts, graphs).

    ``iterate`` over a batch of shape-() Boxes gives numpy scalars, as Gymnasium's does, where the Box's samples
    are 0-d arrays; comparing both sides through this keeps dtypes and values exact.
    """
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(value, GraphInstance):
        return GraphInstance(*(scalars_as_arrays(part) for part in value))
    if isinstance(value, (tuple, list)):
        return type(value)(scalars_as_arrays(item) for item in value)
    if isinstance(value, dict):
        return {key: scalars_as_arrays(item) for key, item in value.items()}
    return value


def to_gym_value(x: Any) -> Any:
    """A value of a catalog space in Gymnasium's form: every ``GraphInstance`` made Gymnasium's (needs gymnasium).

    Here, not in a test module, because ``scripts/bench_spaces.py`` times both libraries on the same values.
    """
    import gymnasium.spaces

    if isinstance(x, GraphInstance):
        return gymnasium.spaces.GraphInstance(*x)
    if isinstance(x, tuple):
        return tuple(to_gym_value(item) for item in x)
    if isinstance(x, dict):
        return {key: to_gym_value(item) for key, item in x.items()}
    return x


def from_gym_value(x: Any) -> Any:
    """The inverse of :func:`to_gym_value` (lists of values included)."""
    import gymnasium.spaces

    if isinstance(x, gymnasium.spaces.GraphInstance):
        return GraphInstance(*(from_gym_value(part) for part in x))
    if isinstance(x, tuple):
        return tuple(from_gym_value(item) for item in x)
    if isinstance(x, list):
        return [from_gym_value(item) for item in x]
    if isinstance(x, dict):
        return {key: from_gym_value(item) for key, item in x.items()}
    return x


# --- hostile values: objects whose dunder methods raise, for contains to answer without raising ----------


class Hostile(Exception):
    """What the hostile objects below raise."""


def _raise(*args: Any, **kwargs: Any) -> Any:
    raise Hostile


class RaisingArray:
    """An object that claims to convert to an array, and fails."""

    __array__ = _raise
    __len__ = _raise
    __iter__ = _raise
    __getitem__ = _raise

    def __repr__(self) -> str:
        return "RaisingArray()"


class RaisingEq:
    """An object whose comparisons and truth value fail (inside an object array, say)."""

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = _raise
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return "RaisingEq()"


class RaisingInt(int):
    """An int whose comparisons, conversions and hashing-free dunders fail."""

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _raise
    __index__ = __int__ = __float__ = __bool__ = _raise
    __hash__ = int.__hash__


class RaisingTuple(tuple):
    """A tuple whose length, iteration and indexing fail."""

    __len__ = __iter__ = __getitem__ = __eq__ = _raise
    __hash__ = tuple.__hash__


class RaisingList(list):
    """A list whose length, iteration and indexing fail."""

    __len__ = __iter__ = __getitem__ = __array__ = _raise


class RaisingStr(str):
    """A str whose length, iteration and membership tests fail."""

    __len__ = __iter__ = __getitem__ = __contains__ = _raise
    __hash__ = str.__hash__


class RaisingDict(dict):
    """A dict whose length, keys, iteration and indexing fail."""

    __len__ = __iter__ = __getitem__ = __contains__ = keys = items = values = _raise


class RaisingGraphInstance(GraphInstance):
    """A GraphInstance whose unpacking and indexing fail."""

    __iter__ = __getitem__ = __len__ = _raise


def _object_array(*items: Any) -> np.ndarray:
    array = np.empty(len(items), dtype=object)
    for index, item in enumerate(items):  # one by one: numpy would call a RaisingArray's __array__
        array[index] = item
    return array


HOSTILE_VALUES: list[Any] = [
    RaisingArray(),
    RaisingEq(),
    RaisingInt(1),
    RaisingTuple((0, 1)),
    RaisingTuple(()),
    RaisingList([1, 0]),
    RaisingStr("ab"),
    RaisingDict(a=1),
    RaisingGraphInstance(np.zeros(2), None, None),
    GraphInstance(RaisingArray(), None, None),
    GraphInstance(np.zeros(2, dtype=np.int64), RaisingArray(), np.zeros((1, 2), dtype=np.int64)),
    (RaisingInt(0), 1),
    (0, RaisingArray()),
    (np.int64(0), RaisingInt(1)),
    [RaisingArray()],
    [RaisingInt(1), RaisingInt(0)],
    (RaisingEq(), RaisingEq()),
    {"a": RaisingArray(), "b": RaisingInt(0)},
    _object_array(RaisingEq(), RaisingEq(), RaisingEq()),
    _object_array(RaisingArray(), RaisingArray()),
]


def hostile_copy(x: Any) -> Any:
    """``x`` with its tuples, lists, dicts, strings, ints and graphs swapped for the raising kinds above."""
    if isinstance(x, GraphInstance):
        return RaisingGraphInstance(*x)
    if isinstance(x, tuple):
        return RaisingTuple(hostile_copy(item) for item in x)
    if isinstance(x, list):
        return RaisingList(hostile_copy(item) for item in x)
    if isinstance(x, dict):
        return RaisingDict({key: hostile_copy(item) for key, item in x.items()})
    if isinstance(x, str):
        return RaisingStr(x)
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return RaisingInt(int(x))
    if isinstance(x, np.ndarray) and x.size:
        return _object_array(*[RaisingEq() for _ in range(x.size)]).reshape(x.shape)
    return x
