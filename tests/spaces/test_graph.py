"""Tests of the Graph space and GraphInstance (vecspaces.spaces.graph, vecspaces._kernels.graph)."""

from __future__ import annotations

import copy
import json
import pickle
import warnings
from typing import Any

import numpy as np
import pytest

from tests.helpers import assert_same_value, needs_gymnasium, same_rng_state
from vecspaces.error import CustomSpaceError, Error, InvalidTypeError, InvalidValueError, NotFlattenableError
from vecspaces.spaces import (
    Box,
    Dict,
    Discrete,
    Graph,
    GraphInstance,
    MultiDiscrete,
    OneOf,
    Sequence,
    Text,
    Tuple,
    flatdim,
    flatten,
    flatten_space,
    unflatten,
)
from vecspaces.spaces import graph as graph_module
from vecspaces.spaces.utils import is_space_dtype_shape_equiv
from vecspaces.vector.utils import (
    batch_differing_spaces,
    batch_space,
    concatenate,
    create_empty_array,
    iterate,
)


def int8(*bits: int) -> np.ndarray:
    return np.array(bits, dtype=np.int8)


def links(*pairs: tuple[int, int], dtype: Any = np.int32) -> np.ndarray:
    return np.array(pairs, dtype=dtype).reshape(-1, 2)


# Node and edge spaces of every kind the JSON, flatten and contains code treats differently.
SPACES: dict[str, Any] = {
    "box_discrete": lambda: Graph(Box(-1.0, 1.0, (3,)), Discrete(4, start=1)),
    "discrete_none": lambda: Graph(Discrete(5), None),
    "box_box": lambda: Graph(Box(0.0, 1.0, (2, 2)), Box(0, 9, (1,), dtype=np.int64)),
    "multidiscrete_nodes": lambda: Graph(MultiDiscrete([2, 3]), Discrete(2)),
    "dict_nodes": lambda: Graph(Dict(p=Box(0.0, 1.0, (2,)), k=Discrete(3)), Discrete(2)),
    "tuple_nodes": lambda: Graph(Tuple((Discrete(3), Box(0.0, 1.0, (1,)))), None),
    "text_nodes": lambda: Graph(Text(3, charset="abc"), Discrete(3)),
    "text_edges": lambda: Graph(Discrete(3), Text(2, min_length=0, charset="xy")),
    "oneof_nodes": lambda: Graph(OneOf((Discrete(2), Box(0.0, 1.0, (2,)))), None),
    "dict_with_text_nodes": lambda: Graph(Dict(name=Text(2, charset="ab"), k=Discrete(2)), Discrete(2)),
    "sequence_nodes": lambda: Graph(Sequence(Discrete(2)), Discrete(2)),
}


def make(name: str, seed: int = 0) -> Graph:
    space = SPACES[name]()
    space.seed(seed)
    return space


def sample_with_edges(space: Graph, num_nodes: int = 4, num_edges: int = 3) -> GraphInstance:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # num_edges with no edge space warns
        return space.sample(num_nodes=num_nodes, num_edges=num_edges)


# --- GraphInstance and construction -------------------------------------------------------------------------


def test_graph_instance_is_a_named_tuple() -> None:
    graph = GraphInstance(np.zeros((2, 1)), None, None)
    assert isinstance(graph, tuple)
    assert graph._fields == ("nodes", "edges", "edge_links")
    nodes, edges, edge_links = graph
    assert nodes.shape == (2, 1) and edges is None and edge_links is None


def test_attributes() -> None:
    node, edge = Box(0.0, 1.0, (3,)), Discrete(4)
    space = Graph(node, edge)
    assert space.node_space is node and space.edge_space is edge
    assert space.batch_node_space == batch_space(node, 1)
    assert space.batch_edge_space == batch_space(edge, 1)
    assert space.shape is None and space.dtype is None
    assert space.is_np_flattenable is False


def test_no_edge_space() -> None:
    space = Graph(Discrete(3), None)
    assert space.edge_space is None and space.batch_edge_space is None


@pytest.mark.parametrize("node", [None, 3, "Box", Box])
def test_node_space_must_be_a_space(node: Any) -> None:
    with pytest.raises(InvalidTypeError, match="node space is not a space"):
        Graph(node, None)


@pytest.mark.parametrize("edge", [3, "Discrete", Discrete])
def test_edge_space_must_be_a_space_or_none(edge: Any) -> None:
    with pytest.raises(InvalidTypeError, match="edge space is not a space"):
        Graph(Discrete(2), edge)


def test_generator_seed_is_used_as_is() -> None:
    rng = np.random.default_rng(1)
    assert Graph(Discrete(2), None, seed=rng).np_random is rng


# --- seeding ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["box_discrete", "discrete_none"])
def test_int_seed_reproduces(name: str) -> None:
    space = SPACES[name]()
    seeds = space.seed(11)
    assert len(seeds) == (3 if space.edge_space is not None else 2)
    assert seeds[0] == 11 and len(set(seeds)) == len(seeds)  # children get independent seeds
    first = [space.sample(num_nodes=4) for _ in range(3)]
    for seed in (11, seeds, list(seeds)):
        space.seed(seed)
        assert_same_value([space.sample(num_nodes=4) for _ in range(3)], first)


def test_none_seed_reproduces() -> None:
    space = Graph(Discrete(100), Discrete(100))
    seeds = space.seed(None)
    assert len(seeds) == 3
    first = space.sample()
    space.seed(seeds)
    assert_same_value(space.sample(), first)


def test_nested_seed_round_trip() -> None:
    space = Graph(Tuple((Discrete(9), Discrete(9))), None)
    seeds = space.seed(2)
    assert isinstance(seeds[1], tuple)
    first = space.sample(num_nodes=5)
    space.seed(seeds)
    assert_same_value(space.sample(num_nodes=5), first)


@pytest.mark.parametrize(("edge", "seed"), [(None, (1, 2, 3)), (None, (1,)), (Discrete(2), (1, 2))])
def test_seed_tuple_of_wrong_length(edge: Any, seed: Any) -> None:
    with pytest.raises(InvalidValueError, match="seed tuple has the wrong length"):
        Graph(Discrete(2), edge).seed(seed)


@pytest.mark.parametrize("seed", [1.5, "1", True, {"a": 1}])
def test_seed_of_wrong_type(seed: Any) -> None:
    with pytest.raises(InvalidTypeError, match="Graph seed has the wrong type"):
        Graph(Discrete(2), None).seed(seed)


def test_negative_seed() -> None:
    with pytest.raises(InvalidValueError):
        Graph(Discrete(2), None).seed(-3)


# --- sampling -----------------------------------------------------------------------------------------------


def test_default_sample() -> None:
    space = make("box_discrete")
    for _ in range(20):
        graph = space.sample()
        assert isinstance(graph, GraphInstance)
        assert graph.nodes.shape == (10, 3) and graph.nodes.dtype == np.float32
        if graph.edges is None:
            assert graph.edge_links is None
        else:
            num_edges = len(graph.edges)
            assert 1 <= num_edges < 90
            assert graph.edges.dtype == np.int64
            assert graph.edge_links.shape == (num_edges, 2) and graph.edge_links.dtype == np.int32
        assert graph in space


def test_edge_links_stay_below_num_nodes_and_reach_every_node() -> None:
    space = make("box_discrete")
    for num_nodes in (1, 2, 3, 7):
        seen: set[int] = set()
        for _ in range(40):
            graph = space.sample(num_nodes=num_nodes)
            if graph.edge_links is not None:
                assert graph.edge_links.min() >= 0 and graph.edge_links.max() < num_nodes
                seen.update(graph.edge_links.ravel().tolist())
        assert seen == (set(range(num_nodes)) if num_nodes > 1 else set())


def test_default_edge_count_reaches_its_range() -> None:
    space = make("box_discrete")
    counts = {0 if g.edges is None else len(g.edges) for g in (space.sample(num_nodes=3) for _ in range(200))}
    assert counts == set(range(6))  # integers(3 * 2)


def test_one_node_has_no_edges() -> None:
    space = make("box_discrete")
    for _ in range(10):
        graph = space.sample(num_nodes=1)
        assert graph.nodes.shape == (1, 3) and graph.edges is None and graph.edge_links is None


@pytest.mark.parametrize("num_edges", [0, 1, 6, np.int64(2)])
def test_explicit_num_edges(num_edges: Any) -> None:
    graph = make("box_discrete").sample(num_nodes=3, num_edges=num_edges)
    if num_edges == 0:
        assert graph.edges is None and graph.edge_links is None
    else:
        assert graph.edges.shape == (num_edges,) and graph.edge_links.shape == (num_edges, 2)


def test_num_edges_without_edge_space_warns() -> None:
    space = make("discrete_none")
    with pytest.warns(UserWarning, match="num_edges=4 but the graph has no edge space"):
        graph = space.sample(num_nodes=3, num_edges=4)
    assert graph.edges is None and graph.edge_links is None


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"num_nodes": 0}, InvalidValueError, "num_nodes is too small"),
        ({"num_nodes": -2}, InvalidValueError, "num_nodes is too small"),
        ({"num_nodes": 2.0}, InvalidTypeError, "num_nodes is not an int"),
        ({"num_nodes": True}, InvalidTypeError, "num_nodes is not an int"),
        ({"num_nodes": None}, InvalidTypeError, "num_nodes is not an int"),
        ({"num_edges": -1}, InvalidValueError, "num_edges is too small"),
        ({"num_edges": "3"}, InvalidTypeError, "num_edges is not an int"),
        ({"mask": np.array([1, 0])}, InvalidTypeError, "mask is not a pair"),
        ({"mask": (None,)}, InvalidValueError, "mask has the wrong length"),
        ({"probability": (None, None, None)}, InvalidValueError, "probability has the wrong length"),
        (
            {"mask": (None, None), "probability": (None, None)},
            InvalidValueError,
            "both a mask and a probability",
        ),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=text):
        make("box_discrete").sample(**kwargs)


def test_consecutive_graphs_draw_fresh_features() -> None:
    # Gymnasium reuses all but one draw of the previous graph: its nodes come out shifted by one.
    space = Graph(Box(0.0, 1.0, (1,)), Box(0.0, 1.0, (1,)), seed=0)
    first, second = (space.sample(num_nodes=6, num_edges=6) for _ in range(2))
    assert not np.isin(second.nodes, first.nodes).any()
    assert not np.isin(second.edges, first.edges).any()


@pytest.mark.parametrize("budget", [0, 20_000, 1 << 20], ids=["no_cache", "evicting", "default"])
def test_samples_do_not_depend_on_the_cache(budget: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph_module, "_BATCHED_CACHE_BYTES", budget)
    cached, fresh = make("box_discrete", 4), make("box_discrete", 4)
    for num_nodes in [3, 5, 3, 4, 5, 6, 7, 8, 9, 10, 3, 11]:
        fresh._batched.clear()
        fresh._batched_bytes = 0
        assert_same_value(cached.sample(num_nodes=num_nodes), fresh.sample(num_nodes=num_nodes))
        assert cached._batched_bytes == sum(size for _, size in cached._batched.values()) <= budget


def test_node_mask_in_batched_form() -> None:
    space = Graph(Discrete(3), Discrete(3), seed=0)
    graph = space.sample(mask=((int8(0, 0, 1),) * 4, None), num_nodes=4)
    assert_same_value(graph.nodes, np.full(4, 2, dtype=np.int64))


def test_edge_mask_of_one_edge_is_applied_to_every_edge() -> None:
    space = Graph(Discrete(3), Discrete(3), seed=0)
    lengths = set()
    for _ in range(20):
        graph = space.sample(mask=(None, int8(0, 1, 0)), num_nodes=4)
        if graph.edges is not None:
            lengths.add(len(graph.edges))
            assert set(graph.edges.tolist()) == {1}
    assert len(lengths) > 3


def test_edge_mask_in_batched_form_with_num_edges() -> None:
    space = Graph(Discrete(3), Discrete(3), seed=0)
    edge_mask = (int8(1, 0, 0), int8(0, 0, 1))
    graph = space.sample(mask=(None, edge_mask), num_nodes=3, num_edges=2)
    assert_same_value(graph.edges, np.array([0, 2]))


def test_probabilities() -> None:
    space = Graph(Discrete(2), Discrete(2), seed=0)
    certain_1 = np.array([0.0, 1.0])
    graph = space.sample(probability=((certain_1,) * 3, certain_1), num_nodes=3, num_edges=None)
    assert_same_value(graph.nodes, np.ones(3, dtype=np.int64))
    if graph.edges is not None:
        assert set(graph.edges.tolist()) == {1}


def test_bad_node_mask_is_reported_by_the_batched_space() -> None:
    space = Graph(Discrete(3), None, seed=0)
    with pytest.raises(Error):
        space.sample(mask=(int8(0, 1, 0), None), num_nodes=2)  # not the batched (per-node) form


@pytest.mark.parametrize("name", list(SPACES))
def test_every_kind_of_node_and_edge_space_samples_contained_graphs(name: str) -> None:
    space = make(name)
    for num_nodes in (1, 3):
        graph = space.sample(num_nodes=num_nodes)
        assert graph in space
    assert sample_with_edges(space) in space


def test_text_nodes_are_a_tuple_of_strings() -> None:
    graph = make("text_nodes").sample(num_nodes=4)
    assert isinstance(graph.nodes, tuple) and len(graph.nodes) == 4
    assert all(isinstance(node, str) for node in graph.nodes)


# --- contains -----------------------------------------------------------------------------------------------


def good() -> GraphInstance:
    return GraphInstance(np.array([0, 2, 1]), np.array([1, 0]), links((0, 2), (2, 2)))


@pytest.mark.parametrize(
    "value",
    [
        tuple(good()),
        None,
        "graph",
        GraphInstance(None, None, None),
        good()._replace(nodes=np.array([0, 3, 1])),
        good()._replace(nodes=np.array([0.0, 2.0])),
        good()._replace(nodes="abc"),
        good()._replace(nodes=5),
        good()._replace(edge_links=None),
        good()._replace(edges=None),
        good()._replace(edges=np.array([1, 2])),
        good()._replace(edges=np.array([1])),
        good()._replace(edge_links=links((0, 3), (2, 2))),
        good()._replace(edge_links=links((0, -1), (2, 2))),
        good()._replace(edge_links=links((0, 1), (2, 2), dtype=np.float64)),
        good()._replace(edge_links=links((0, 1), (1, 1), dtype=bool)),
        good()._replace(edge_links=[[0, 2], [2, 2]]),
        good()._replace(edge_links=np.array([0, 2, 2, 2])),
        good()._replace(edge_links=links((0, 1))),
    ],
    ids=[
        "plain_tuple",
        "none",
        "str",
        "no_nodes",
        "node_out_of_range",
        "float_nodes",
        "str_nodes",
        "scalar_nodes",
        "edges_without_links",
        "links_without_edges",
        "edge_out_of_range",
        "fewer_edges_than_links",
        "link_beyond_nodes",
        "negative_link",
        "float_links",
        "bool_links",
        "list_links",
        "flat_links",
        "fewer_links_than_edges",
    ],
)
def test_contains_rejects(value: Any) -> None:
    assert Graph(Discrete(3), Discrete(2)).contains(value) is False


def test_contains_accepts() -> None:
    space = Graph(Discrete(3), Discrete(2))
    assert space.contains(good())
    assert space.contains(good()._replace(edge_links=links((0, 2), (2, 2), dtype=np.uint8)))
    assert space.contains(GraphInstance(np.array([1]), None, None))


def test_gymnasiums_graph_instances_are_contained_and_flatten() -> None:
    gym_spaces = pytest.importorskip("gymnasium.spaces")
    space = Graph(Discrete(3), Discrete(2))
    assert space.contains(gym_spaces.GraphInstance(*good()))
    assert not space.contains(gym_spaces.GraphInstance(*good()._replace(edges=np.array([5, 0]))))
    sample = gym_spaces.Graph(gym_spaces.Discrete(3), gym_spaces.Discrete(2), seed=1).sample()
    assert sample in space
    assert_same_value(flatten(space, sample), flatten(space, GraphInstance(*sample)))


def test_contains_edges_without_edge_space() -> None:
    assert not Graph(Discrete(3), None).contains(good())
    assert Graph(Discrete(3), None).contains(good()._replace(edges=None, edge_links=None))


def test_contains_text_nodes() -> None:
    space = Graph(Text(2, charset="ab"), None)
    assert space.contains(GraphInstance(("a", "ab", "b"), None, None))
    assert space.contains(GraphInstance(["a", "ab"], None, None))  # the nodes one by one, as in Gymnasium
    assert not space.contains(GraphInstance(("a", "abc"), None, None))
    assert not space.contains(GraphInstance("ab", None, None))


# --- JSON ---------------------------------------------------------------------------------------------------


def json_round_trip(space: Graph, values: list[GraphInstance]) -> list[GraphInstance]:
    return space.from_jsonable(json.loads(json.dumps(space.to_jsonable(values))))


@pytest.mark.parametrize("name", list(SPACES))
def test_json_round_trip(name: str) -> None:
    space = make(name)
    values = [space.sample(num_nodes=1), space.sample(num_nodes=4), sample_with_edges(space, 3, 5)]
    assert_same_value(json_round_trip(space, values), values)


def test_json_form() -> None:
    space = Graph(Discrete(3), Text(2, charset="xy"))
    graph = GraphInstance(np.array([0, 2]), ("x", "yy"), links((1, 0), (0, 0)))
    assert space.to_jsonable([graph]) == [{"nodes": [[0, 2]], "edges": [["x", "yy"]], "edge_links": [[1, 0], [0, 0]]}]
    assert space.to_jsonable([graph._replace(edges=None, edge_links=None)]) == [{"nodes": [[0, 2]]}]


def test_json_with_edges_but_no_edge_space() -> None:
    space = Graph(Discrete(3), None)
    with pytest.raises(InvalidValueError, match="has no edge space"):
        space.to_jsonable([good()])
    with pytest.raises(InvalidValueError, match="has no edge space"):
        space.from_jsonable([{"nodes": [[0]], "edges": [[1]], "edge_links": [[0, 0]]}])


def test_json_features_of_another_shape_are_refused() -> None:
    space = Graph(Box(0, 1, (2,)), Dict(w=Box(0, 1, (3,))))
    with pytest.raises(InvalidValueError, match=r"rows of shape \(3,\) for Box"):
        space.from_jsonable([{"nodes": [[[0, 0, 0]]]}])
    with pytest.raises(InvalidValueError, match=r"rows of shape \(2,\) for Box"):  # inside the edges' Dict
        space.from_jsonable([{"nodes": [[[0, 0]]], "edges": {"w": [[[0, 0]]]}, "edge_links": [[0, 0]]}])
    graph = space.from_jsonable([{"nodes": [[[0, 0], [1, 1]]], "edges": {"w": [[[0, 0, 1]]]}, "edge_links": [[1, 0]]}])
    assert graph[0].nodes.shape == (2, 2) and graph[0].edges["w"].shape == (1, 3)


# --- equality, repr, pickling -------------------------------------------------------------------------------


def test_eq() -> None:
    assert Graph(Discrete(3), Discrete(2)) == Graph(Discrete(3), Discrete(2))
    assert Graph(Discrete(3), None) == Graph(Discrete(3), None)
    assert Graph(Discrete(3), Discrete(2)) != Graph(Discrete(3), None)
    assert Graph(Discrete(3), Discrete(2)) != Graph(Discrete(4), Discrete(2))
    assert Graph(Discrete(3), None) != Discrete(3)


def test_repr() -> None:
    assert repr(Graph(Box(0.0, 1.0, (2,)), Discrete(3))) == "Graph(Box(0.0, 1.0, (2,), float32), Discrete(3))"
    assert repr(Graph(Discrete(3), None)) == "Graph(Discrete(3), None)"


@pytest.mark.parametrize("clone", ["pickle", "deepcopy"])
def test_pickle_and_deepcopy_keep_the_stream(clone: str) -> None:
    space = make("box_discrete")
    space.sample()
    flatten(space, space.sample(num_nodes=2))  # fills the flatten cache
    copied = pickle.loads(pickle.dumps(space)) if clone == "pickle" else copy.deepcopy(space)
    assert copied == space
    assert copied._batched == {}
    for _ in range(3):
        assert_same_value(copied.sample(), space.sample())
    graph = space.sample()
    assert_same_value(flatten(copied, graph), flatten(space, graph))


def test_unpickle_state_without_batched_spaces() -> None:
    state = Graph(Discrete(3), Discrete(2)).__dict__.copy()
    for key in ("batch_node_space", "batch_edge_space", "_batched"):
        del state[key]
    space = Graph.__new__(Graph)
    space.__setstate__(state)
    assert space.batch_node_space == batch_space(Discrete(3), 1)
    assert space.sample(num_nodes=3) in space


# --- flatten family -----------------------------------------------------------------------------------------


def test_flatdim_is_undefined() -> None:
    with pytest.raises(NotFlattenableError, match="flatdim is undefined for a Graph"):
        flatdim(Graph(Discrete(3), None))


def test_flatten_space() -> None:
    space = Graph(Box(-1.0, 1.0, (2, 2)), Discrete(3))
    assert flatten_space(space) == Graph(flatten_space(Box(-1.0, 1.0, (2, 2))), flatten_space(Discrete(3)))
    assert flatten_space(Graph(Discrete(3), None)) == Graph(flatten_space(Discrete(3)), None)


def test_flatten_layout() -> None:
    space = Graph(Box(0, 5, (2, 2), dtype=np.int64), Discrete(3, start=1))
    nodes = np.arange(8).reshape(2, 2, 2) % 6
    graph = GraphInstance(nodes, np.array([3, 1]), links((0, 1), (1, 1)))
    flat = flatten(space, graph)
    assert_same_value(flat.nodes, nodes.reshape(2, 4))
    assert_same_value(flat.edges, np.array([[0, 0, 1], [1, 0, 0]]))
    assert flat.edge_links is graph.edge_links
    assert flat in flatten_space(space)
    assert_same_value(unflatten(space, flat), graph)


@pytest.mark.parametrize("name", list(SPACES))
def test_flatten_round_trip(name: str) -> None:
    space = make(name)
    for graph in (space.sample(num_nodes=1), space.sample(num_nodes=4), sample_with_edges(space)):
        flat = flatten(space, graph)
        assert isinstance(flat, GraphInstance)
        if space.node_space.is_np_flattenable:
            assert flat.nodes.shape == (len(flat.nodes), flatdim(space.node_space))
        assert flat in flatten_space(space)
        assert_same_value(unflatten(space, flat), graph)


@pytest.mark.parametrize("operation", [flatten, unflatten])
def test_flatten_needs_a_graph_instance(operation: Any) -> None:
    with pytest.raises(InvalidTypeError, match="needs a GraphInstance"):
        operation(Graph(Discrete(3), None), (np.array([0]), None, None))


@pytest.mark.parametrize("operation", [flatten, unflatten])
def test_flatten_edges_without_edge_space(operation: Any) -> None:
    with pytest.raises(InvalidValueError, match="has no edge space"):
        operation(Graph(Discrete(3), None), good())


def test_is_space_dtype_shape_equiv() -> None:
    space = Graph(Box(0.0, 1.0, (2,)), Discrete(3))
    assert is_space_dtype_shape_equiv(space, Graph(Box(-1.0, 2.0, (2,)), Discrete(5)))
    assert not is_space_dtype_shape_equiv(space, Graph(Box(0.0, 1.0, (3,)), Discrete(3)))
    assert not is_space_dtype_shape_equiv(space, Graph(Box(0.0, 1.0, (2,)), None))
    assert not is_space_dtype_shape_equiv(Graph(Box(0.0, 1.0, (2,)), None), space)
    assert is_space_dtype_shape_equiv(Graph(Discrete(2), None), Graph(Discrete(3), None))
    assert not is_space_dtype_shape_equiv(space, Box(0.0, 1.0, (2,)))


# --- batching family ----------------------------------------------------------------------------------------


def test_batch_space_is_a_tuple_of_independent_copies() -> None:
    space = Graph(Discrete(1000), Discrete(5), seed=0)
    before = copy.deepcopy(space.np_random)
    batched = batch_space(space, 3)
    assert isinstance(batched, Tuple) and len(batched) == 3
    assert all(sub == space and sub is not space for sub in batched)
    assert same_rng_state(space.np_random, before)
    nodes = [tuple(sub.sample(num_nodes=5).nodes.tolist()) for sub in batched]
    assert len(set(nodes)) == 3
    assert batched.sample() in batched


def test_batch_differing_spaces() -> None:
    spaces = [Graph(Discrete(2), None), Graph(Discrete(3), Discrete(2))]
    batched = batch_differing_spaces(spaces)
    assert isinstance(batched, Tuple) and list(batched) == spaces
    assert all(a is not b for a, b in zip(batched, spaces, strict=True))


def test_concatenate_and_iterate() -> None:
    space = make("box_discrete")
    items = [space.sample(num_nodes=n) for n in (1, 2, 3)]
    batch = concatenate(space, items, create_empty_array(space, 3))
    assert batch == tuple(items)
    assert list(iterate(batch_space(space, 3), batch)) == items


def test_iterate_of_a_graph_itself_is_refused() -> None:
    with pytest.raises(CustomSpaceError, match="iterate needs a batched space"):
        iterate(Graph(Discrete(2), None), ())


@pytest.mark.parametrize("fn", [np.zeros, np.empty])
def test_create_empty_array(fn: Any) -> None:
    space = Graph(Box(0.0, 1.0, (3,)), Discrete(2))
    batch = create_empty_array(space, 2, fn)
    assert isinstance(batch, tuple) and len(batch) == 2
    for graph in batch:
        assert isinstance(graph, GraphInstance)
        assert graph.nodes.shape == (1, 3) and graph.nodes.dtype == np.float32
        assert graph.edges.shape == (1,) and graph.edges.dtype == np.int64
        assert graph.edge_links.shape == (1, 2) and graph.edge_links.dtype == np.int32  # as sampled links
    zeros = create_empty_array(space, 1)[0]
    assert zeros in space


def test_create_empty_array_without_edge_space() -> None:
    (graph,) = create_empty_array(Graph(Discrete(3), None), 1)
    assert_same_value(graph, GraphInstance(np.zeros(1, dtype=np.int64), None, None))
    assert create_empty_array(Graph(Discrete(3), None), 0) == ()


@pytest.mark.parametrize("n", [-1, 2.0, "1"])
def test_create_empty_array_rejects_bad_sizes(n: Any) -> None:
    with pytest.raises(InvalidValueError, match="batch size is invalid"):
        create_empty_array(Graph(Discrete(3), None), n)


# --- differential tests against Gymnasium -------------------------------------------------------------------

gym_spaces = pytest.importorskip("gymnasium.spaces")


def gym_graph(x: GraphInstance) -> Any:
    return gym_spaces.GraphInstance(*x)


def canonical(x: Any) -> Any:
    """``x`` with plain tuples for graphs and sorted dict keys (Gymnasium orders Dict keys its own way)."""
    if isinstance(x, dict):
        return {key: canonical(x[key]) for key in sorted(x)}
    if isinstance(x, tuple):
        return tuple(canonical(item) for item in x)
    if isinstance(x, list):
        return [canonical(item) for item in x]
    return x


GYM_PAIRS: dict[str, Any] = {
    "box_discrete": lambda: gym_spaces.Graph(gym_spaces.Box(-1.0, 1.0, (3,)), gym_spaces.Discrete(4, start=1)),
    "discrete_none": lambda: gym_spaces.Graph(gym_spaces.Discrete(5), None),
    "box_box": lambda: gym_spaces.Graph(gym_spaces.Box(0.0, 1.0, (2, 2)), gym_spaces.Box(0, 9, (1,), dtype=np.int64)),
    "multidiscrete_nodes": lambda: gym_spaces.Graph(gym_spaces.MultiDiscrete([2, 3]), gym_spaces.Discrete(2)),
    "dict_nodes": lambda: gym_spaces.Graph(
        gym_spaces.Dict(p=gym_spaces.Box(0.0, 1.0, (2,)), k=gym_spaces.Discrete(3)), gym_spaces.Discrete(2)
    ),
    "tuple_nodes": lambda: gym_spaces.Graph(
        gym_spaces.Tuple((gym_spaces.Discrete(3), gym_spaces.Box(0.0, 1.0, (1,)))), None
    ),
}


@needs_gymnasium(
    (1, 4), "a Graph's node and edge spaces are Box or Discrete only, and its flatten and unflatten of a Graph differ"
)
@pytest.mark.parametrize("name", list(GYM_PAIRS))
def test_flatten_agrees_with_gymnasium(name: str) -> None:
    space, gym_space = make(name), GYM_PAIRS[name]()
    assert repr(flatten_space(space)) == repr(gym_spaces.flatten_space(gym_space))
    for graph in (space.sample(num_nodes=2), sample_with_edges(space, 4, 3)):
        flat = flatten(space, graph)
        gym_flat = gym_spaces.flatten(gym_space, gym_graph(graph))
        assert_same_value(canonical(flat), canonical(gym_flat))
        assert_same_value(canonical(unflatten(space, flat)), canonical(gym_spaces.unflatten(gym_space, gym_flat)))


@needs_gymnasium(
    (1, 4),
    "a Graph's node and edge spaces are Box or Discrete only, and its JSON form of a Graph nests the nodes differently",
)
@pytest.mark.parametrize("name", list(GYM_PAIRS))
def test_json_agrees_with_gymnasium(name: str) -> None:
    space, gym_space = make(name), GYM_PAIRS[name]()
    graphs = [space.sample(num_nodes=3), sample_with_edges(space, 4, 2)]
    data = space.to_jsonable(graphs)
    assert data == gym_space.to_jsonable([gym_graph(g) for g in graphs])
    assert_same_value(canonical(space.from_jsonable(data)), canonical(gym_space.from_jsonable(data)))


@needs_gymnasium((1, 4), "its Graph.contains refuses nodes given as a list")
def test_contains_agrees_with_gymnasium() -> None:
    space = Graph(Discrete(3), Discrete(2))
    gym_space = gym_spaces.Graph(gym_spaces.Discrete(3), gym_spaces.Discrete(2))
    candidates = [
        good(),
        good()._replace(nodes=np.array([0, 3, 1])),
        good()._replace(edge_links=None),
        good()._replace(edges=None, edge_links=None),
        good()._replace(edge_links=links((0, 3), (2, 2))),
        good()._replace(edge_links=links((0, -1), (2, 2))),
        good()._replace(edge_links=links((0, 1), (2, 2), dtype=np.float64)),
        good()._replace(edge_links=links((0, 1))),
        good()._replace(edges=np.array([1, 2])),
        good()._replace(nodes=[0, 2, 1]),  # nodes and edges given one by one in a list or tuple
        good()._replace(nodes=(0, 2, 1), edges=[1, 0]),
        good()._replace(nodes=[0, 3, 1]),
        good()._replace(edges=(1, 2)),
    ]
    candidates += [space.sample(num_nodes=n) for n in (1, 2, 5)]
    for graph in candidates:
        assert space.contains(graph) == gym_space.contains(gym_graph(graph)), graph


def test_repr_agrees_with_gymnasium() -> None:
    space, gym_space = make("box_discrete"), GYM_PAIRS["box_discrete"]()
    assert repr(space) == repr(gym_space)
