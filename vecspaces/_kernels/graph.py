"""Operations on :class:`~vecspaces.spaces.Graph` spaces.

Flat layout: none of fixed size (``flatdim`` raises :class:`~vecspaces.error.NotFlattenableError`).
``flatten`` keeps the graph and flattens each node and edge: a ``GraphInstance`` whose ``nodes`` stack the
flattened nodes (an array of shape ``(num_nodes, flatdim(node_space))`` for a flattenable node space), whose
``edges`` do the same for edges (or are None) and whose ``edge_links`` are unchanged. ``flatten_space`` is
``Graph(flatten_space(node_space), flatten_space(edge_space) or None)``.

Batched type: a ``Tuple`` of ``n`` independently seeded copies of the space; a batch is a tuple of ``n``
``GraphInstance``. ``create_empty_array`` gives ``n`` one-node placeholder graphs whose ``edge_links`` are
int32 like sampled ones (Gymnasium makes them int64).

Shared memory: a :class:`~vecspaces._ops.memory_nodes.VariableLeaf` (no fixed size; a worker pool sends the
value through its pipe).

Gymnasium: converted with its node and edge spaces (a missing edge space stays missing).

A node or edge space of a custom kind with nothing registered fails the flatten family with its path, e.g.
``space.node_space['a']: ...`` (prefixed by :func:`~vecspaces.spaces._container.relocate`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from vecspaces._kernels.custom import register_batched_as_copies
from vecspaces._ops.batch import batch_space, create_empty_array
from vecspaces._ops.flatten import flatdim, flatten, flatten_space, is_space_dtype_shape_equiv, same_kind, unflatten
from vecspaces._ops.gymnasium import is_gymnasium_graph_instance, register_converter
from vecspaces._ops.memory_nodes import LayoutNode, Path, VariableLeaf, layout_nodes
from vecspaces._ops.support import reason
from vecspaces._space import Space, cached
from vecspaces.error import (
    CustomSpaceError,
    Error,
    InvalidTypeError,
    InvalidValueError,
    NotFlattenableError,
    message,
    show,
)
from vecspaces.spaces._container import relocate
from vecspaces.spaces._stacking import stack_items, unstack
from vecspaces.spaces.graph import Graph, GraphInstance

# The node and edge spaces' places in the path of an error about them.
NODES = ".node_space"
EDGES = ".edge_space"


class _FeaturePlan:
    """What flattening the nodes (or edges) of a graph needs, computed once per space (part of a ``_FlattenPlan``).

    That is the feature space, its batched form (to split the nodes into items), the flat feature space and
    its batched form (to split flattened nodes into rows). A custom feature space's error names its path
    (``segment``, :data:`NODES` or :data:`EDGES`); the ``try`` blocks cost nothing until something raises.
    """

    def __init__(self, space: Space[Any], batched: Space[Any], segment: str) -> None:
        self.space = space
        self.batched = batched
        self.segment = segment
        try:
            self.flat_space = flatten_space(space)
            self.batch_flat_space = batch_space(self.flat_space, 1)
        except CustomSpaceError as error:
            raise relocate(error, segment, "space") from None

    def flatten(self, batch: Any) -> Any:
        """Flatten every item of a batch and stack the results."""
        flatten_item = flatten.dispatch(type(self.space))
        try:
            flat_items = [flatten_item(self.space, item) for item in unstack(self.space, self.batched, batch)]
            return stack_items(self.flat_space, flat_items)
        except CustomSpaceError as error:
            raise relocate(error, self.segment, "space") from None

    def unflatten(self, flat_batch: Any) -> Any:
        """Inverse of :meth:`flatten`."""
        unflatten_item = unflatten.dispatch(type(self.space))
        try:
            rows = unstack(self.flat_space, self.batch_flat_space, flat_batch)
            return stack_items(self.space, [unflatten_item(self.space, row) for row in rows])
        except CustomSpaceError as error:
            raise relocate(error, self.segment, "space") from None


class _FlattenPlan:
    """The node and edge :class:`_FeaturePlan` of a graph, computed once per space (``cached``)."""

    def __init__(self, space: Graph) -> None:
        self.nodes = _FeaturePlan(space.node_space, space.batch_node_space, NODES)
        self.edges: _FeaturePlan | None = None
        if space.edge_space is not None and space.batch_edge_space is not None:
            self.edges = _FeaturePlan(space.edge_space, space.batch_edge_space, EDGES)


def _check_graph(operation: str, space: Graph, x: Any) -> GraphInstance:
    if is_gymnasium_graph_instance(x):
        x = GraphInstance(*x)
    if not isinstance(x, GraphInstance):
        raise InvalidTypeError(
            message(f"{operation} of {space!r} needs a GraphInstance", expected="a GraphInstance", got=show(x))
        )
    if x.edges is not None and space.edge_space is None:
        raise InvalidValueError(
            message(
                f"{operation} of {space!r} got edges, but the space has no edge space",
                expected="edges=None",
                got=show(x.edges),
            )
        )
    return x


@flatdim.register(Graph)
def _flatdim_graph(space: Graph) -> int:
    raise NotFlattenableError(
        message(
            f"flatdim is undefined for a Graph: {reason('flatdim', 'Graph')}",
            expected="a space with a fixed-size flat form",
            got=repr(space),
            fix="flatten_space(space) gives a Graph of flattened node and edge spaces instead",
        )
    )


@flatten_space.register(Graph)
def _flatten_space_graph(space: Graph) -> Graph:
    # New spaces on every call (not the flatten plan's): the caller may seed and sample them.
    segment = NODES
    try:
        node_space = flatten_space(space.node_space)
        segment = EDGES
        edge_space = None if space.edge_space is None else flatten_space(space.edge_space)
    except CustomSpaceError as error:
        raise relocate(error, segment, "space") from None
    return Graph(node_space, edge_space)


@flatten.register(Graph)
def _flatten_graph(space: Graph, x: Any) -> GraphInstance:
    nodes, edges, edge_links = _check_graph("flatten", space, x)
    plan = cached(space, _FlattenPlan)
    flat_edges = None if edges is None or plan.edges is None else plan.edges.flatten(edges)
    return GraphInstance(plan.nodes.flatten(nodes), flat_edges, edge_links)


@unflatten.register(Graph)
def _unflatten_graph(space: Graph, x: Any) -> GraphInstance:
    nodes, edges, edge_links = _check_graph("unflatten", space, x)
    plan = cached(space, _FlattenPlan)
    unflat_edges = None if edges is None or plan.edges is None else plan.edges.unflatten(edges)
    return GraphInstance(plan.nodes.unflatten(nodes), unflat_edges, edge_links)


@is_space_dtype_shape_equiv.register(Graph)
def _is_space_dtype_shape_equiv_graph(space_1: Graph, space_2: Space[Any]) -> bool:
    other = same_kind(space_1, space_2, Graph)
    if other is None:
        return False
    space_2 = other
    segment = NODES
    try:
        if not is_space_dtype_shape_equiv(space_1.node_space, space_2.node_space):
            return False
        if space_1.edge_space is None or space_2.edge_space is None:
            return space_1.edge_space is None and space_2.edge_space is None
        segment = EDGES
        return is_space_dtype_shape_equiv(space_1.edge_space, space_2.edge_space)
    except Error as error:  # no values here: whatever a node or edge space raises is about it
        raise relocate(error, segment, "space_1") from None


register_batched_as_copies(Graph)


@create_empty_array.register(Graph)
def _create_empty_array_graph(
    space: Graph, n: int = 1, fn: Callable[..., np.ndarray[Any, Any]] = np.zeros
) -> tuple[GraphInstance, ...]:
    edge_space = space.edge_space
    return tuple(
        GraphInstance(
            nodes=create_empty_array(space.node_space, 1, fn),
            edges=None if edge_space is None else create_empty_array(edge_space, 1, fn),
            edge_links=None if edge_space is None else fn((1, 2), dtype=np.int32),
        )
        for _ in range(n)
    )


@layout_nodes.register(Graph)
def _layout_nodes_graph(space: Graph, path: Path = ()) -> list[LayoutNode]:
    return [VariableLeaf(path, space)]


@register_converter(Graph)
def _convert_graph(space: Any, lib: Any, child: Callable[[Any, str], Any], seed: Any) -> Any:
    edge_space = None if space.edge_space is None else child(space.edge_space, ".edge_space")
    return lib.Graph(child(space.node_space, ".node_space"), edge_space, seed=seed)
