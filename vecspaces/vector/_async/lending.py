"""Observation buffers lent to the caller, so ``copy=True`` does not have to copy large observations.

With ``copy=True`` a step must return arrays that later steps leave alone. Copying a large batch out of
shared memory is then the most expensive part of a step: the workers' writes sit in other cores' caches, so
the copy moves every byte between cores (an atari batch of 8 frames, 226 KB, takes ~70 us that way against
~5 us within one core, measured on a 2-core VM). So the pool keeps a few spare observation buffers and lends
one per step instead: the large array leaves it returns are views of that buffer, and the next steps write
the other buffers until the caller lets go of it.

Knowing when the caller lets go: each lent array is made over a fresh ctypes object covering its region of
the buffer. numpy's views keep the owner of their memory alive, so that object lives exactly as long as any
array derived from the lent one (slices, reshapes, ``torch.from_numpy``...), and a weak reference to it says
when the last one is gone. A buffer is written again only when every array lent from it is gone; when the
caller holds on to every spare buffer, the step writes the pool's own buffer and copies, as without lending.

Small leaves (under ``LEND_MIN_BYTES`` for the whole batch) are copied: that is cheaper than lending them.
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Iterable
from typing import Any

import numpy as np

from vecspaces._ops.layout import ArrayLeaf
from vecspaces.vector.utils.layout import SharedBatch, SharedLayout

__all__ = ["LEND_MIN_BYTES", "SPARE_BUFFERS", "ObservationLender", "buffers_needed", "copied"]

# A whole-batch leaf at least this large is lent rather than copied.
LEND_MIN_BYTES = 16 * 1024
# Spare buffers to lend in turn: the caller may hold two batches (e.g. ``obs`` and ``next_obs``) while the
# next step writes a third.
SPARE_BUFFERS = 3
# The pool's own buffer: written by copy=False steps, pool mode and steps when no spare buffer is free.
OWN = 0


def buffers_needed(layout: SharedLayout, copy: bool) -> int:
    """How many observation buffers a pool with this layout allocates: its own, plus spares worth lending."""
    lendable = copy and any(layout.slots[index].nbytes * layout.n >= LEND_MIN_BYTES for index in _array_slots(layout))
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
        # Per buffer: weak references to the owners of the arrays lent from it.
        self._lent: list[list[weakref.ref[Any]]] = [[] for _ in batches]
        self._plans = [_Plan(batch, lend=g != OWN) for g, batch in enumerate(batches)]

    def choose(self) -> int:
        """Pick the buffer the next reset or step writes (the caller puts it in the control block)."""
        pending = OWN
        if self.spares:
            # The current buffer first: if it is free, writing it needs no rows carried over.
            if self.current != OWN and self._is_free(self.current):
                pending = self.current
            else:
                pending = next((g for g in self.spares if self._is_free(g)), OWN)
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
        """The caller's batch, read from the current buffer: lent and copied (``copy=True``) or views.

        Args:
            variable: the batched values of the variable-size leaves, which the buffer does not hold.
        """
        g = self.current
        batch = self.batches[g]
        leaves = batch.read_leaves(variable)
        if not self.copy:
            return batch.assemble(leaves)
        plan = self._plans[g]
        if plan.lent:
            held: list[weakref.ref[Any]] = []
            buffer = batch.buffer
            for position, region_type, offset, dtype, shape in plan.lent:
                owner = region_type.from_buffer(buffer, offset)
                held.append(weakref.ref(owner))
                leaves[position] = np.frombuffer(owner, dtype).reshape(shape)
            self._lent[g] = held
        for position, view in plan.copied:
            leaves[position] = view.copy()
        for position in plan.others:
            leaves[position] = copied(leaves[position])
        return batch.assemble(leaves)

    def _is_free(self, g: int) -> bool:
        return all(owner() is None for owner in self._lent[g])


class _Plan:
    """How the caller's batch is made from one buffer's leaves (see ``SharedBatch.read_leaves``).

    Attributes:
        lent: the array leaves to lend: (position, ctypes type of their region, byte offset, dtype, shape).
        copied: the array leaves to copy: (position, batch view).
        others: the positions of the other leaves (Text, OneOf, variable-size), copied as values.
    """

    def __init__(self, batch: SharedBatch, lend: bool) -> None:
        self.lent: list[tuple[int, Any, int, np.dtype[Any], tuple[int, ...]]] = []
        self.copied: list[tuple[int, np.ndarray[Any, Any]]] = []
        slots = batch.layout.slots
        for position, index in batch.array_leaves:
            view = batch.batch_views[index]
            if lend and view.nbytes >= LEND_MIN_BYTES:
                offset = batch.offset + slots[index].offset
                self.lent.append((position, ctypes.c_uint8 * view.nbytes, offset, view.dtype, view.shape))
            else:
                self.copied.append((position, view))
        arrays = {position for position, _ in batch.array_leaves}
        self.others = [position for position in range(len(batch.read_leaves())) if position not in arrays]


def _array_slots(layout: SharedLayout) -> list[int]:
    """The slots of the layout's array leaves (Text and OneOf slots are decoded at every read, never lent)."""
    return [leaf.first for leaf in layout._fixed if isinstance(leaf.node, ArrayLeaf)]


def copied(value: Any) -> Any:
    """A copy of a value read from shared memory: its arrays copied, its dicts and tuples rebuilt."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {key: copied(item) for key, item in value.items()}
    if type(value) is tuple:
        return tuple(copied(item) for item in value)
    return value
