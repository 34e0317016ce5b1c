"""Hypothesis strategies that generate random, possibly nested, spaces, and valid masks and probabilities for them.

The leaves cover what the catalog (tests/catalog.py) covers: every Box dtype with scalar or per-entry bounds
(finite, half-bounded, unbounded), Discrete with any start, MultiBinary and MultiDiscrete of one or two axes,
Text with string or set charsets; composites nest them (Graph with composite node and edge spaces too).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import strategies as st

from tests.catalog import random_mask, random_probability
from vecspaces.spaces import (
    Box,
    Dict,
    Discrete,
    Graph,
    MultiBinary,
    MultiDiscrete,
    OneOf,
    Sequence,
    Space,
    Text,
    Tuple,
)

shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)
small_shapes = st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple)

BOX_DTYPES = [
    "float16",
    "float32",
    "float64",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "bool",
]


def _float_bounds(draw: st.DrawFn, dtype: np.dtype[Any]) -> tuple[float, float]:
    """One entry's (low, high) for a float Box: finite, half-bounded or unbounded, exactly representable."""
    limit = 1000.0 if dtype.itemsize == 2 else 1e6
    finite = st.floats(-limit, limit, width=8 * dtype.itemsize)
    low = draw(st.one_of(st.just(-math.inf), finite))
    high = draw(st.one_of(st.just(math.inf), finite))
    if math.isfinite(low) and math.isfinite(high) and high < low:
        low, high = high, low
    return low, high


# Composites flatten into numpy's result dtype of their parts, as Gymnasium does: int64 with uint64 or with a
# float gives float64, which holds integers exactly only up to 2**53. Boxes inside composites stay within it.
FLOAT64_EXACT = 2**53


def _int_bounds(draw: st.DrawFn, dtype: np.dtype[Any], exact_in_float64: bool = False) -> tuple[int, int]:
    """One entry's (low, high) for an integer Box, anywhere in the dtype's range (or the float64-exact part)."""
    info = np.iinfo(dtype)
    lowest, highest = int(info.min), int(info.max)
    if exact_in_float64:
        lowest, highest = max(lowest, -FLOAT64_EXACT), min(highest, FLOAT64_EXACT)
    low = draw(st.integers(lowest, highest))
    return low, draw(st.integers(low, highest))


@st.composite
def boxes(draw: st.DrawFn, exact_in_float64: bool = False) -> Box:
    """Boxes of every dtype, with the same bounds for every entry (scalars) or per-entry bound arrays.

    Args:
        draw: Hypothesis' draw function.
        exact_in_float64: keep integer bounds within +-2**53, so values survive a float64 flat vector.
    """
    dtype = np.dtype(draw(st.sampled_from(BOX_DTYPES)))
    shape = draw(shapes)
    if dtype.kind == "b":
        if draw(st.booleans()):
            return Box(0, 1, shape, dtype)
        highs = np.array(draw(st.lists(st.booleans(), min_size=math.prod(shape), max_size=math.prod(shape))))
        lows = highs & np.array(draw(st.lists(st.booleans(), min_size=highs.size, max_size=highs.size)))
        return Box(lows.reshape(shape), highs.reshape(shape), dtype=dtype)
    if dtype.kind == "i" and draw(st.integers(0, 5)) == 0:
        # A signed Box with an infinite bound stands for the dtype's limit (half-bounded or unbounded).
        low, high = draw(st.sampled_from([(-math.inf, math.inf), (-math.inf, 0), (0, math.inf)]))
        return Box(low, high, shape, dtype)

    def bounds() -> tuple[Any, Any]:
        return _float_bounds(draw, dtype) if dtype.kind == "f" else _int_bounds(draw, dtype, exact_in_float64)

    if draw(st.booleans()):  # one pair for every entry
        low, high = bounds()
        return Box(low, high, shape, dtype)
    pairs = [bounds() for _ in range(math.prod(shape))]
    lows = np.array([low for low, _ in pairs], dtype=dtype).reshape(shape)
    highs = np.array([high for _, high in pairs], dtype=dtype).reshape(shape)
    return Box(lows, highs, dtype=dtype)


discretes = st.builds(
    lambda n, start, dtype: Discrete(n, start=start, dtype=dtype),
    st.integers(1, 10),
    st.integers(-5, 5),
    st.sampled_from([np.int64, np.int32, np.int16]),
)
multi_binaries = small_shapes.map(MultiBinary)


@st.composite
def multi_discretes(draw: st.DrawFn) -> MultiDiscrete:
    """MultiDiscrete spaces with a 1-D or 2-D ``nvec``, a uniform or per-entry start, and a narrow dtype."""
    rows = draw(st.integers(1, 3)) if draw(st.booleans()) else None
    columns = draw(st.integers(1, 4))
    counts = draw(st.lists(st.integers(1, 6), min_size=columns * (rows or 1), max_size=columns * (rows or 1)))
    nvec = np.array(counts).reshape((rows, columns) if rows else (columns,))
    if draw(st.booleans()):
        start = np.full(nvec.shape, draw(st.integers(-3, 3)))
    else:
        start = np.array(draw(st.lists(st.integers(-3, 3), min_size=nvec.size, max_size=nvec.size))).reshape(nvec.shape)
    dtype = draw(st.sampled_from([np.int64, np.int32, np.int8]))
    return MultiDiscrete(nvec, dtype=dtype, start=start)


characters = st.characters(codec="utf-8", exclude_categories=("Cs",))


@st.composite
def texts(draw: st.DrawFn) -> Text:
    """Text spaces whose charset is a string in the drawn order, or a set or frozenset (which Text sorts)."""
    chars = draw(st.lists(characters, min_size=1, max_size=8, unique=True))
    kind = draw(st.sampled_from(["str", "set", "frozenset"]))
    charset: str | set[str] | frozenset[str] = (
        "".join(chars) if kind == "str" else set(chars) if kind == "set" else frozenset(chars)
    )
    lengths = draw(st.tuples(st.integers(0, 6), st.integers(1, 6)))
    return Text(max(lengths), min_length=min(lengths), charset=charset)


leaf_spaces: st.SearchStrategy[Space[Any]] = st.one_of(boxes(), discretes, multi_binaries, multi_discretes(), texts())
# The leaves of composites (see FLOAT64_EXACT).
inner_leaf_spaces: st.SearchStrategy[Space[Any]] = st.one_of(
    boxes(exact_in_float64=True), discretes, multi_binaries, multi_discretes(), texts()
)
keys = st.text(alphabet="abcdefgh_", min_size=1, max_size=4)


def _fixed_size_composites(children: st.SearchStrategy[Space[Any]]) -> st.SearchStrategy[Space[Any]]:
    return st.one_of(
        st.lists(children, min_size=1, max_size=3).map(lambda spaces: Tuple(spaces)),
        st.dictionaries(keys, children, min_size=1, max_size=3).map(lambda spaces: Dict(spaces)),
        st.lists(children, min_size=1, max_size=3).map(lambda spaces: OneOf(spaces)),
    )


# Node and edge spaces of a Graph: leaves, or Tuple/Dict/OneOf of them. A Graph samples 10 nodes and up to 90
# edges, so a Graph or Sequence inside would multiply the cost of a sample by that much at every level.
graph_parts: st.SearchStrategy[Space[Any]] = st.recursive(inner_leaf_spaces, _fixed_size_composites, max_leaves=3)


def _composites(children: st.SearchStrategy[Space[Any]]) -> st.SearchStrategy[Space[Any]]:
    return st.one_of(
        _fixed_size_composites(children),
        st.builds(lambda feature, stack: Sequence(feature, stack=stack), children, st.booleans()),
        st.builds(lambda node, edge: Graph(node, edge), graph_parts, st.one_of(st.none(), graph_parts)),
    )


# Composites at the top, with anything nested inside.
nested_spaces: st.SearchStrategy[Space[Any]] = _composites(st.recursive(inner_leaf_spaces, _composites, max_leaves=4))
# A leaf alone (with the full integer ranges), or a composite.
spaces: st.SearchStrategy[Space[Any]] = st.one_of(leaf_spaces, nested_spaces)

# Seeds for numpy generators: what a test draws to make its samples, masks and probabilities reproducible.
seeds = st.integers(0, 2**32 - 1)


def masks(space: Space[Any]) -> st.SearchStrategy[Any]:
    """Valid ``mask`` arguments for ``space.sample`` in every form it takes (see ``tests.catalog.random_mask``)."""
    return seeds.map(lambda seed: random_mask(space, np.random.default_rng(seed)))


def probabilities(space: Space[Any]) -> st.SearchStrategy[Any]:
    """Valid ``probability`` arguments for ``space.sample`` (see ``tests.catalog.random_probability``)."""
    return seeds.map(lambda seed: random_probability(space, np.random.default_rng(seed)))
