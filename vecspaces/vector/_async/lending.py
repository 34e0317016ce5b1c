"""Observation buffers lent to the caller, so ``copy=True`` does not have to copy observations.

With ``copy=True`` a step must return arrays that later steps leave alone. Copying a batch out of shared
memory is then the most expensive part of a step: the workers' writes sit in other cores' caches, so the copy
moves every byte between cores, which costs many times a copy of data already in the copying core's cache. So
the pool keeps a few spare observation buffers and lends one per step instead: the array leaves it returns are
arrays over that buffer, and the next steps write the other buffers until the caller lets go of it.

Knowing when the caller lets go: a spare buffer has one array per array leaf, made once over the shared
memory and returned by every step that lends the buffer. numpy makes such an array the base of every view
derived from it (slices, reshapes, ``np.frombuffer``...), and consumers such as ``memoryview`` or
``torch.from_numpy`` keep a reference to it, so its reference count says whether anything besides the lender
still uses it. A buffer is written again only when none of its arrays is used elsewhere; when the caller holds
on to every spare buffer, the step writes the pool's own buffer and copies, as without lending. Handing out the
same arrays again also makes lending cheaper than copying even the smallest leaf.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

import numpy as np

from vecspaces._ops.memory_nodes import ArrayLeaf
from vecspaces.vector._async.copies import copied
from vecspaces.vector.utils.shared_batch import SharedBatch
from vecspaces.vector.utils.shared_layout import SharedLayout

__all__ = ["SPARE_BUFFERS", "ObservationLender", "buffers_needed"]

# Spare buffers to lend in turn: the caller may hold two batches (e.g. ``obs`` and ``next_obs``) while the
# next step writes a third.
SPARE_BUFFERS = 3
# The pool's own buffer: written by copy=False steps, pool mode and steps when no spare buffer is free.
OWN = 0
# Lending needs reference counts; an interpreter without them (PyPy) copies every batch instead.
CAN_LEND = hasattr(sys, "getrefcount")


def buffers_needed(layout: SharedLayout, copy: bool) -> int:
    """How many observation buffers a pool with this layout allocates: its own, plus spares to lend."""
    lendable = CAN_LEND and copy and any(isinstance(node, ArrayLeaf) for node in layout.nodes)
    return 1 + SPARE_BUFFERS if lendable else 1


class ObservationLender:
    """Chooses the observation buffer each reset or step writes, and makes the caller's batch from it.

    Args:
        batches: the pool's observation buffers; ``batches[0]`` is the pool's own, the others are spares.
        copy: whether the caller gets batches later steps leave alone (``copy=True``) or views of the pool's
            own buffer (``copy=False``).
    """

    def __init__(self, batches: tuple[SharedBatch, ...], copy: bool) -> None:
        self.batches = batches
        self.copy = copy
        self.spares = range(1, len(batches)) if copy else range(0)
        # The buffer holding every env's latest observation, and the one the running command writes.
        self.current = self.pending = OWN
        self._plans = [_Plan(batch, lend=g != OWN) for g, batch in enumerate(batches)]
        # Per current buffer, the spares to try. The current one first: when the caller dropped the batch it
        # was given, writing it again needs no rows carried over and keeps one buffer warm in the caches.
        # Then the least recently written: a caller who keeps the last batch or two leaves that one free.
        self._search_order = {
            g: [g, *self.spares[g:], *self.spares[: g - 1]] if g != OWN else list(self.spares)
            for g in range(len(batches))
        }

    def choose(self) -> int:
        """Pick the buffer the next reset or step writes (the caller puts it in the control block)."""
        pending = OWN
        for g in self._search_order[self.current]:
            if self._plans[g].is_free():
                pending = g
                break
        self.pending = pending
        return pending

    def settle(self, stale_envs: Iterable[int]) -> None:
        """After a reset or step: the pending buffer becomes current.

        Args:
            stale_envs: the envs the command did not write (not reset, or failed): their rows are carried
                over from the previous buffer, so every env's latest observation is in the current one.
        """
        if self.pending != self.current:
            rows = list(stale_envs)
            if rows:
                for target, source in zip(
                    self.batches[self.pending].batch_views, self.batches[self.current].batch_views, strict=True
                ):
                    target[rows] = source[rows]
        self.current = self.pending

    def use_own_buffer(self) -> None:
        """Make the pool's own buffer current (pool mode uses only it)."""
        self.pending = OWN
        self.settle(range(self.batches[OWN].n))

    def result(self, variable: list[Any] | None = None) -> Any:
        """The caller's batch, read from the current buffer: lent or copied (``copy=True``), or views.

        Args:
            variable: the batched values of the variable-size leaves, which the buffer does not hold.
        """
        batch = self.batches[self.current]
        plan = self._plans[self.current]
        if plan.all_lent is not None:  # the usual batch: nothing to read, copy or decode
            return batch.assemble(plan.all_lent)
        leaves = batch.read_leaves(variable)
        if not self.copy:
            return batch.assemble(leaves)
        for position, array in plan.lent:
            leaves[position] = array
        for position, view in plan.copied:
            leaves[position] = view.copy()
        for position in plan.others:
            leaves[position] = copied(leaves[position])
        return batch.assemble(leaves)


class _Plan:
    """How the caller's batch is made from one buffer's leaves (see ``SharedBatch.read_leaves``).

    Attributes:
        lent: the array leaves to lend: (position, the array lent every time).
        copied: the array leaves to copy: (position, batch view).
        others: the positions of the other leaves (Text, OneOf, variable-size), copied as values.
    """

    def __init__(self, batch: SharedBatch, lend: bool) -> None:
        self.lent: list[tuple[int, np.ndarray[Any, Any]]] = []
        self.copied: list[tuple[int, np.ndarray[Any, Any]]] = []
        slots = batch.layout.slots
        for position, index in batch.array_leaves:
            view = batch.batch_views[index]
            if lend:
                # Over the buffer itself, not a view of another array: so views of it have it as their base.
                offset = batch.offset + slots[index].offset
                self.lent.append((position, np.ndarray(view.shape, view.dtype, buffer=batch.buffer, offset=offset)))
            else:
                self.copied.append((position, view))
        arrays = {position for position, _ in batch.array_leaves}
        self.others = [position for position in range(len(batch.read_leaves())) if position not in arrays]
        self._lent_arrays = tuple(array for _, array in self.lent)  # in the order of the leaves (array_leaves')
        # When every leaf is lent (a Box, a Dict or Tuple of arrays): the leaves of every batch, as they are.
        self.all_lent = self._lent_arrays if lend and not self.others else None
        self._unused = self._reference_total()

    def is_free(self) -> bool:
        """Whether no array lent from this buffer is used outside the lender."""
        # Every count is at least its unused value (the lender holds each array), so equal totals mean
        # every count is unused.
        return self._reference_total() == self._unused

    def _reference_total(self) -> int:
        # Measured by this same code when nothing else holds the arrays, so how the interpreter counts the
        # argument cancels out.
        return sum(map(sys.getrefcount, self._lent_arrays))
