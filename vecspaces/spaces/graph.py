"""The :class:`Graph` space and its values, :class:`GraphInstance`."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from vecspaces._ops.batch import batch_space
from vecspaces._ops.gymnasium import equals_gymnasium, is_gymnasium_graph_instance
from vecspaces._space import Space, derive_seeds, json_checked, space_kind
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces._container import Container, adopt_child
from vecspaces.spaces._masks import reject_both
from vecspaces.spaces._stacking import stack_items, unstack

__all__ = ["Graph", "GraphInstance"]

# Batched node and edge spaces are kept per Graph for reuse (building one costs more than sampling it) while
# they take up to this many bytes in all, roughly; the least recently used ones make room for new ones.
_BATCHED_CACHE_BYTES = 1 << 20
# What a space object takes besides its arrays, roughly, for that count.
_SPACE_OVERHEAD_BYTES = 1000


class GraphInstance(NamedTuple):
    """A value of a :class:`Graph` space.

    Attributes:
        nodes: the features of the ``n`` nodes, batched as ``batch_space(node_space, n)`` batches them
            (e.g. an array of shape ``(n, *node_space.shape)``).
        edges: the features of the ``m`` edges, batched the same way, or None when the graph has no edges.
        edge_links: an integer array of shape ``(m, 2)``: edge ``i`` goes from node ``edge_links[i, 0]`` to
            node ``edge_links[i, 1]``; None when ``edges`` is None.

    Example:
        >>> graph = GraphInstance(np.zeros((2, 3)), np.array([1]), np.array([[0, 1]], dtype=np.int32))
        >>> graph.edge_links.shape
        (1, 2)
    """

    nodes: Any
    edges: Any | None
    edge_links: npt.NDArray[Any] | None


@space_kind
class Graph(Space[GraphInstance]):
    """Graphs whose nodes and edges carry features from a node space and an edge space.

    Args:
        node_space: the space of one node's features (any space; a Gymnasium space is converted to vecspaces).
        edge_space: the space of one edge's features (any space, converted likewise), or None for graphs
            without edges.
        seed: an int, ``None``, a tuple of seeds, or a ``numpy.random.Generator`` used as the graph's own
            sampler (see :meth:`seed`).

    Raises:
        InvalidTypeError: ``node_space`` is not a space, or ``edge_space`` is neither a space nor None.

    Example:
        >>> from vecspaces.spaces import Box, Discrete
        >>> space = Graph(Box(-1, 1, (3,)), Discrete(4), seed=0)
        >>> space
        Graph(Box(-1.0, 1.0, (3,), float32), Discrete(4))
        >>> graph = space.sample(num_nodes=5, num_edges=2)
        >>> graph.nodes.shape, graph.edges.shape, graph.edge_links.shape, graph in space
        ((5, 3), (2,), (2, 2), True)
    """

    node_space: Space[Any]
    edge_space: Space[Any] | None
    batch_node_space: Space[Any]
    batch_edge_space: Space[Any] | None

    def __init__(
        self,
        node_space: Space[Any],
        edge_space: Space[Any] | None,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        node_space = adopt_child(node_space, "Graph node space is not a space", expected="a space")
        if edge_space is not None:
            edge_space = adopt_child(edge_space, "Graph edge space is not a space", expected="a space or None")
        self.node_space = node_space
        self.edge_space = edge_space
        # The batched form of one node / edge; its kernels iterate a batch of any size.
        self.batch_node_space = batch_space(node_space, 1)
        self.batch_edge_space = None if edge_space is None else batch_space(edge_space, 1)
        self._batched: dict[tuple[bool, int], tuple[Space[Any], int]] = {}  # (space, its size in bytes)
        self._batched_bytes = 0
        super().__init__(None, None, seed)

    @property
    def is_np_flattenable(self) -> Literal[False]:
        """Always False: a graph has no fixed number of nodes, so it has no fixed-size flat vector."""
        return False

    def seed(self, seed: int | Sequence[Any] | None = None) -> tuple[Any, ...]:
        """Seed the graph's generator (which draws edge counts and links) and the node and edge spaces'.

        Args:
            seed: one of

                * ``None``: all get fresh entropy;
                * an int: seeds the graph, and independent seeds derived from it seed the node and edge
                  spaces;
                * a tuple or list ``(graph seed, node seed)``, or ``(graph seed, node seed, edge seed)`` when
                  there is an edge space, e.g. a value returned by ``seed``.

        Returns:
            ``(graph seed, node seed)`` or ``(graph seed, node seed, edge seed)``, which reproduces the same
            samples when given back.

        Raises:
            InvalidTypeError: ``seed`` is of another type.
            InvalidValueError: a tuple has the wrong number of elements.

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> space = Graph(Discrete(5), Discrete(2))
            >>> seeds = space.seed(3)
            >>> len(seeds)
            3
            >>> first = space.sample(num_nodes=4)
            >>> _ = space.seed(seeds)
            >>> space.contains(first) and bool((space.sample(num_nodes=4).nodes == first.nodes).all())
            True
        """
        children: list[Space[Any]] = [self.node_space]
        if self.edge_space is not None:
            children.append(self.edge_space)
        if seed is None:
            return (super().seed(None), *(child.seed(None) for child in children))
        if isinstance(seed, (tuple, list)):
            if len(seed) != 1 + len(children):
                expected = "(graph seed, node seed" + (", edge seed)" if self.edge_space is not None else ")")
                raise InvalidValueError(
                    message("Graph seed tuple has the wrong length", expected=expected, got=show(seed))
                )
            return (
                super().seed(seed[0]),
                *(child.seed(child_seed) for child, child_seed in zip(children, seed[1:], strict=True)),
            )
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            own = super().seed(seed)  # checks the seed first: it must not be negative
            child_seeds = derive_seeds(own, len(children))
            return (own, *(child.seed(s) for child, s in zip(children, child_seeds, strict=True)))
        raise InvalidTypeError(
            message(
                "Graph seed has the wrong type",
                expected="None, a non-negative int, or a tuple (graph seed, node seed[, edge seed])",
                got=show(seed),
            )
        )

    def sample(
        self,
        mask: tuple[Any, Any] | None = None,
        probability: tuple[Any, Any] | None = None,
        num_nodes: int = 10,
        num_edges: int | None = None,
    ) -> GraphInstance:
        """Draw a random graph.

        Nodes are a sample of ``batch_space(node_space, num_nodes)`` and edges one of
        ``batch_space(edge_space, num_edges)``, so masks use the batched format (for a ``Discrete`` node
        space, a tuple of one int8 mask per node). Every call draws fresh features, where consecutive
        Gymnasium graphs reuse all but one of the previous graph's random draws.

        Args:
            mask: ``(node_mask, edge_mask)``, each None or a mask of the batched node / edge space. When
                ``num_edges`` is not given, ``edge_mask`` is the mask of one edge and is applied to every
                edge, as in Gymnasium: it is passed on as one mask per edge, which the batched edge space takes
                when the edge space is a Discrete or batches to a Tuple of copies (Text, Sequence, Graph, OneOf);
                for a Dict or Tuple edge space give ``num_edges`` and a mask of the batched edge space.
            probability: ``(node_probability, edge_probability)``, the same with probabilities.
            num_nodes: the number of nodes, at least 1.
            num_edges: the number of edges; by default a random number in
                ``[0, num_nodes * (num_nodes - 1))``.

        Returns:
            A :class:`GraphInstance`. ``edges`` and ``edge_links`` are None when there is no edge space or no
            edge; otherwise ``edge_links`` is an int32 array of shape ``(num_edges, 2)`` with values in
            ``[0, num_nodes)``.

        Raises:
            InvalidTypeError: ``num_nodes``/``num_edges`` is not an int, or ``mask``/``probability`` is not a
                pair.
            InvalidValueError: ``num_nodes < 1``, ``num_edges < 0``, or both ``mask`` and ``probability``.

        Warns:
            UserWarning: ``num_edges`` is given but there is no edge space.

        Example:
            >>> from vecspaces.spaces import Box, Discrete
            >>> space = Graph(Box(0, 1, (2,)), Discrete(3), seed=0)
            >>> only_2 = np.array([0, 0, 1], dtype=np.int8)
            >>> graph = space.sample(mask=(None, only_2), num_nodes=3)
            >>> bool((graph.edges == 2).all()) if graph.edges is not None else True
            True
        """
        num_nodes = _check_count("num_nodes", num_nodes, minimum=1)
        reject_both("Graph", mask, probability)
        kind: str | None = None
        node_arg = edge_arg = None
        if mask is not None or probability is not None:
            kind = "mask" if mask is not None else "probability"
            node_arg, edge_arg = _split(mask if mask is not None else probability, kind)

        if num_edges is None:
            # Self-loops and both directions are allowed, so n * (n - 1) is no true maximum; as Gymnasium.
            num_edges = int(self.np_random.integers(num_nodes * (num_nodes - 1))) if num_nodes > 1 else 0
            if edge_arg is not None:
                edge_arg = tuple(edge_arg for _ in range(num_edges))
        else:
            num_edges = _check_count("num_edges", num_edges, minimum=0)
            if self.edge_space is None:
                warnings.warn(
                    f"Graph.sample got num_edges={num_edges} but the graph has no edge space; no edges are drawn",
                    UserWarning,
                    stacklevel=2,
                )

        nodes = self._sample_batch(self.node_space, False, num_nodes, kind, node_arg)
        if self.edge_space is None or num_edges == 0:
            return GraphInstance(nodes, None, None)
        edges = self._sample_batch(self.edge_space, True, num_edges, kind, edge_arg)
        edge_links = self.np_random.integers(0, num_nodes, size=(num_edges, 2), dtype=np.int32)
        return GraphInstance(nodes, edges, edge_links)

    def _sample_batch(self, space: Space[Any], edge: bool, n: int, kind: str | None, arg: Any) -> Any:
        """Sample ``n`` features of ``space`` (the node space, or the edge space if ``edge``) at once.

        The batched space is reseeded from the node (edge) space's generators on every call: that advances the
        node space, so the next graph draws new features, and it makes a cached batched space as good as a
        fresh one.
        """
        cache = self._batched
        entry = cache.pop((edge, n), None)
        if entry is None:
            batched = batch_space(space, n)
            entry = (batched, _approximate_bytes(batched))
            self._batched_bytes += entry[1]
            while self._batched_bytes > _BATCHED_CACHE_BYTES and cache:
                self._batched_bytes -= cache.pop(next(iter(cache)))[1]  # the least recently used
        batched = entry[0]
        if self._batched_bytes <= _BATCHED_CACHE_BYTES:
            cache[edge, n] = entry  # (re)inserted last: the most recently used
        else:  # too large to keep, even alone
            self._batched_bytes -= entry[1]
        batched.seed(_fresh_seed(space))
        if kind is None or arg is None:
            return batched.sample()
        if kind == "mask":
            return batched.sample(mask=arg)
        return batched.sample(probability=arg)

    def contains(self, x: Any) -> bool:
        """Return whether ``x`` is a graph of this space; never raises.

        ``x`` must be a :class:`GraphInstance` (or Gymnasium's) whose nodes are all in the node space. Either
        ``edges`` and ``edge_links`` are both None, or there is an edge space, every edge is in it, and
        ``edge_links`` is an integer array of shape ``(number of edges, 2)`` whose values index existing nodes.
        Nodes and edges are batched as ``sample`` makes them, or given one by one in a list or tuple (as
        Gymnasium accepts).

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> space = Graph(Discrete(3), Discrete(2))
            >>> space.contains(GraphInstance(np.array([0, 2]), np.array([1]), np.array([[1, 0]])))
            True
            >>> space.contains(GraphInstance(np.array([0, 2]), np.array([1]), np.array([[2, 0]])))
            False
        """
        if not (isinstance(x, GraphInstance) or is_gymnasium_graph_instance(x)):
            return False
        try:  # unpacking included: a GraphInstance subclass may override iteration
            nodes, edges, edge_links = x
            if nodes is None:
                return False
            node_items = unstack(self.node_space, self.batch_node_space, nodes)
            if not all(map(self.node_space.contains, node_items)):
                return False
            if edges is None or edge_links is None:
                return edges is None and edge_links is None
            if self.edge_space is None or self.batch_edge_space is None:
                return False
            edge_items = unstack(self.edge_space, self.batch_edge_space, edges)
            return (
                isinstance(edge_links, np.ndarray)
                and edge_links.dtype.kind in "iu"
                and edge_links.shape == (len(edge_items), 2)
                and bool(((edge_links >= 0) & (edge_links < len(node_items))).all())
                and all(map(self.edge_space.contains, edge_items))
            )
        except Exception:  # a value that does not split into nodes or edges is simply not contained
            return False

    @json_checked
    def to_jsonable(self, sample_n: Iterable[GraphInstance]) -> list[dict[str, Any]]:
        """Convert a batch of graphs to JSON-serialisable data: one dict per graph.

        Each dict has ``"nodes"`` and, when the graph has edges, ``"edges"`` and ``"edge_links"``. Features
        are written in Gymnasium's form, ``batch_space(node_space, 1).to_jsonable([nodes])``, wherever that
        form holds any number of nodes, so Gymnasium can read the data back. For node or edge spaces that
        batch to a Tuple of copies (Text, Sequence, Graph, OneOf, custom spaces, or Dict/Tuple spaces holding
        one), where that form keeps only the first node, they are written as
        ``[node_space.to_jsonable(list of nodes)]``.

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> space = Graph(Discrete(3), Discrete(2))
            >>> space.to_jsonable([GraphInstance(np.array([0, 2]), np.array([1]), np.array([[1, 0]]))])
            [{'nodes': [[0, 2]], 'edges': [[1]], 'edge_links': [[1, 0]]}]
        """
        result = []
        for graph in sample_n:
            entry = {"nodes": _batch_to_jsonable(self.node_space, self.batch_node_space, graph.nodes)}
            if graph.edges is not None and graph.edge_links is not None:
                if self.edge_space is None or self.batch_edge_space is None:
                    raise InvalidValueError(
                        message(
                            "Graph.to_jsonable got a graph with edges but the space has no edge space",
                            expected="edges=None and edge_links=None",
                            got=show(graph.edges),
                        )
                    )
                entry["edges"] = _batch_to_jsonable(self.edge_space, self.batch_edge_space, graph.edges)
                entry["edge_links"] = np.asarray(graph.edge_links).tolist()
            result.append(entry)
        return result

    @json_checked
    def from_jsonable(self, sample_n: Iterable[dict[str, Any]]) -> list[GraphInstance]:
        """Convert data made by :meth:`to_jsonable` (ours or Gymnasium's) back to a list of graphs.

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> space = Graph(Discrete(3), Discrete(2))
            >>> data = [{"nodes": [[0, 2]], "edges": [[1]], "edge_links": [[1, 0]]}]
            >>> space.from_jsonable(data)[0].edge_links
            array([[1, 0]], dtype=int32)
        """
        result = []
        for entry in sample_n:
            nodes = _batch_from_jsonable(self.node_space, self.batch_node_space, entry["nodes"])
            if "edges" not in entry:
                result.append(GraphInstance(nodes, None, None))
                continue
            if self.edge_space is None or self.batch_edge_space is None:
                raise InvalidValueError(
                    message(
                        "Graph.from_jsonable got edges but the space has no edge space",
                        expected="entries without 'edges'",
                        got=show(entry),
                    )
                )
            edges = _batch_from_jsonable(self.edge_space, self.batch_edge_space, entry["edges"])
            edge_links = np.asarray(entry["edge_links"], dtype=np.int32).reshape(-1, 2)
            result.append(GraphInstance(nodes, edges, edge_links))
        return result

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Graph):
            return equals_gymnasium(self, other)
        return self.node_space == other.node_space and self.edge_space == other.edge_space

    def __repr__(self) -> str:
        return f"Graph({self.node_space!r}, {self.edge_space!r})"

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_batched"] = {}  # a cache: rebuilt on demand, not worth pickling
        state["_batched_bytes"] = 0
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if "batch_node_space" not in self.__dict__:  # pickled by an old Gymnasium
            self.batch_node_space = batch_space(self.node_space, 1)
            self.batch_edge_space = None if self.edge_space is None else batch_space(self.edge_space, 1)
        self._batched = {}
        self._batched_bytes = 0


def _approximate_bytes(space: Space[Any]) -> int:
    """Roughly the memory ``space`` takes: its arrays (bounds and the like) and those of the spaces it holds."""
    total = _SPACE_OVERHEAD_BYTES
    for value in vars(space).values():
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif isinstance(value, Space):
            total += _approximate_bytes(value)
        elif isinstance(value, (tuple, list, dict)):
            for item in value.values() if isinstance(value, dict) else value:
                if isinstance(item, Space):
                    total += _approximate_bytes(item)
    return total


def _check_count(name: str, value: Any, minimum: int) -> int:
    """Check a node or edge count given to ``Graph.sample`` and return it as an int."""
    expected = f"an int >= {minimum}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InvalidTypeError(message(f"Graph.sample {name} is not an int", expected=expected, got=show(value)))
    if value < minimum:
        raise InvalidValueError(message(f"Graph.sample {name} is too small", expected=expected, got=show(value)))
    return int(value)


def _split(pair: Any, kind: str) -> tuple[Any, Any]:
    """Check that a mask or probability argument is a ``(node_arg, edge_arg)`` pair."""
    expected = f"a tuple (node_{kind}, edge_{kind})"
    if not isinstance(pair, (tuple, list)):
        raise InvalidTypeError(message(f"Graph.sample {kind} is not a pair", expected=expected, got=show(pair)))
    if len(pair) != 2:
        raise InvalidValueError(message(f"Graph.sample {kind} has the wrong length", expected=expected, got=show(pair)))
    return pair[0], pair[1]


def _fresh_seed(space: Space[Any]) -> Any:
    """Draw a seed for ``batch_space(space, n)`` from ``space``'s generators, advancing them.

    A Dict or Tuple gets a structure of seeds drawn from its children, since seeding one with a structure (as
    its ``seed()`` return value does) restores its children's generators but not its own.
    """
    if isinstance(space, Container):
        return space.pack([_fresh_seed(child) for child in space.children()])
    return int(space.np_random.integers(2**63 - 1))


def _json_holds_any_count(space: Space[Any], batched: Space[Any]) -> bool:
    """Whether the JSON form ``batched.to_jsonable([batch])`` holds batches of any size.

    ``batched`` is ``batch_space(space, 1)``. True for spaces that batch to arrays (and Dicts/Tuples of
    them); False where some part batches to a Tuple of copies, whose JSON form has one entry per copy.
    """
    if isinstance(space, Container):
        return all(
            _json_holds_any_count(child, batched_child)
            for child, batched_child in zip(space.children(), batched.children(), strict=True)  # type: ignore[attr-defined]
        )
    return not isinstance(batched, Container)


def _batch_to_jsonable(space: Space[Any], batched: Space[Any], batch: Any) -> Any:
    """The JSON form of a batch of node (edge) features, see :meth:`Graph.to_jsonable`."""
    if _json_holds_any_count(space, batched):
        return batched.to_jsonable([batch])
    return [space.to_jsonable(unstack(space, batched, batch))]


def _batch_from_jsonable(space: Space[Any], batched: Space[Any], data: Any) -> Any:
    """Inverse of :func:`_batch_to_jsonable`."""
    if _json_holds_any_count(space, batched):
        return _batch_of_any_count(space, batched, data)
    return stack_items(space, space.from_jsonable(data[0]))


def _batch_of_any_count(space: Space[Any], batched: Space[Any], data: Any) -> Any:
    """``batched.from_jsonable(data)[0]`` for a batch of any number of items, not only ``batched``'s one.

    ``batched`` is ``batch_space(space, 1)``, whose leaves are arrays (see :func:`_json_holds_any_count`): each
    row must be an item of its leaf of ``space``.
    """
    if isinstance(space, Container):
        parts = batched.unpack(data, "the features")  # type: ignore[attr-defined]
        children = zip(space.children(), batched.children(), parts, strict=True)  # type: ignore[attr-defined]
        return batched.pack(_batch_of_any_count(*child) for child in children)  # type: ignore[attr-defined]
    [batch] = data
    array = np.array(batch, dtype=batched.dtype)
    if array.shape[1:] != space.shape:
        raise InvalidValueError(
            message(
                f"Graph.from_jsonable got rows of shape {array.shape[1:]} for {space!r}",
                expected=f"one row of shape {space.shape} per node or edge, as to_jsonable gives",
                got=show(array),
            )
        )
    return array
