"""Hypothesis strategies that generate random, possibly nested, spaces."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

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


@st.composite
def boxes(draw: st.DrawFn) -> Box:
    dtype = np.dtype(
        draw(st.sampled_from(["float16", "float32", "float64", "int8", "uint8", "int32", "int64", "uint64", "bool"]))
    )
    shape = draw(shapes)
    if dtype.kind == "b":
        return Box(0, 1, shape, dtype)
    if dtype.kind == "f":
        limit = 1000.0 if dtype.itemsize == 2 else 1e6
        low = draw(st.one_of(st.just(-np.inf), st.floats(-limit, limit)))
        high = draw(
            st.one_of(
                st.just(np.inf),
                st.floats(-limit, limit).filter(lambda h: h >= low if np.isfinite(low) else True),
            )
        )
        if np.isfinite(low) and np.isfinite(high) and high < low:
            low, high = high, low
        return Box(low, high, shape, dtype)
    info = np.iinfo(dtype)
    low = draw(st.integers(int(info.min), int(info.max)))
    high = draw(st.integers(low, int(info.max)))
    return Box(low, high, shape, dtype)


discretes = st.builds(
    lambda n, start, dtype: Discrete(n, start=start, dtype=dtype),
    st.integers(1, 10),
    st.integers(-5, 5),
    st.sampled_from([np.int64, np.int32, np.int16]),
)
multi_binaries = small_shapes.map(MultiBinary)
multi_discretes = st.builds(
    lambda nvec, offset: MultiDiscrete(nvec, start=np.full(len(nvec), offset)),
    st.lists(st.integers(1, 6), min_size=1, max_size=4),
    st.integers(-3, 3),
)
charsets = st.sets(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)
texts = st.builds(
    lambda charset, lengths: Text(max(lengths), min_length=min(lengths), charset="".join(sorted(charset))),
    charsets,
    st.tuples(st.integers(0, 6), st.integers(1, 6)),
)

leaf_spaces: st.SearchStrategy[Space[Any]] = st.one_of(boxes(), discretes, multi_binaries, multi_discretes, texts)
keys = st.text(alphabet="abcdefgh_", min_size=1, max_size=4)


def _composites(children: st.SearchStrategy[Space[Any]]) -> st.SearchStrategy[Space[Any]]:
    return st.one_of(
        st.lists(children, min_size=1, max_size=3).map(lambda spaces: Tuple(spaces)),
        st.dictionaries(keys, children, min_size=1, max_size=3).map(lambda spaces: Dict(spaces)),
        st.builds(lambda feature, stack: Sequence(feature, stack=stack), children, st.booleans()),
        st.lists(children, min_size=1, max_size=3).map(lambda spaces: OneOf(spaces)),
        st.builds(lambda node, edge: Graph(node, edge), leaf_spaces, st.one_of(st.none(), leaf_spaces)),
    )


spaces: st.SearchStrategy[Space[Any]] = st.recursive(leaf_spaces, _composites, max_leaves=6)
