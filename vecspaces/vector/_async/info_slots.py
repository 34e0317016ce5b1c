"""Info dicts of plain numbers, carried in shared memory instead of pickled through the pipes.

Most envs return the same few numbers in every step's info (ALE: ``lives``, ``episode_frame_number``,
``frame_number``; MuJoCo: positions, velocities, reward terms). Pickled, sent, unpickled and batched in the main
process, they cost several times what the rest of a step costs there, all of it while the workers wait. So an
env slice writes such an info into its env's row of ``info_values`` (one 8-byte slot per key) and the row's
*layout*, its keys and the kind of each value, into ``info_layouts``; the main process batches the rows with a
few numpy operations, to exactly what :func:`~vecspaces.vector.infos.add_info` makes of the dicts.

A layout is named by a hash of its content, so the ids mean the same in every process. An env slice announces
each layout it uses once, in the reply of the first command that uses it (``Reply.info_layouts``); the main
process learns it before it reads any row of that layout, and reads no row at all before it learnt one. An info
with anything else (a nested dict, an array, a string, more than ``MAX_INFO_VALUES`` keys) travels pickled, as
before: its row's layout is 0.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces.vector.infos import add_info

__all__ = ["MAX_INFO_VALUES", "InfoReader", "InfoWriter", "Layout"]

# Keys per info that fit in shared memory (MuJoCo's richest infos have about ten).
MAX_INFO_VALUES = 16

# An info's keys with the kind of each value: "bool", "int", "float" for Python's scalars (which batch as
# Gymnasium batches them), else a numpy scalar's dtype string.
Layout = tuple[tuple[str, str], ...]

# A Python int batches as np.asarray(int) does: the fast path stores it as int64, so only where that is the
# default integer (everywhere but Windows with numpy 1.x).
_PYTHON_INT_IS_INT64 = np.asarray(0).dtype == np.int64
_PYTHON_KINDS = {bool: "bool", float: "float", int: "int"}
_PYTHON_DTYPES = {"bool": np.dtype(np.bool_), "int": np.dtype(np.int64), "float": np.dtype(np.float64)}


def _kind(value: Any) -> str | None:
    """How ``value`` is stored, or None if it is not a number that fits a slot exactly."""
    kind = _PYTHON_KINDS.get(type(value))
    if kind is not None:
        if kind == "int" and not (_PYTHON_INT_IS_INT64 and -(2**63) <= value < 2**63):
            return None
        return kind
    if isinstance(value, (np.bool_, np.integer, np.floating)):
        dtype = value.dtype
        if dtype.itemsize <= 8 and dtype != np.uint64:  # float64 holds every float up to 8 bytes exactly
            return str(dtype.str)
    return None


def _layout_id(layout: Layout) -> int:
    digest = hashlib.blake2b(repr(layout).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True) or 1  # 0 means "no layout"


class InfoWriter:
    """An env slice's side: writes its envs' infos into their rows when they fit.

    Args:
        layouts: the pool's ``info_layouts`` (one id per env).
        values: the pool's ``info_values`` (one row of slots per env).
        env_indices: the slice's envs.
    """

    def __init__(self, layouts: npt.NDArray[np.int64], values: npt.NDArray[np.int64], env_indices: range) -> None:
        rows = slice(env_indices.start, env_indices.stop)
        self.layouts = layouts[rows]
        self.ints = values[rows]
        self.floats = values.view(np.float64)[rows]
        # Whether each env's row holds an info, which saves writing 0 again and again. A restarted worker finds
        # the rows as its predecessor left them: emptied here.
        self.layouts[:] = 0
        self.in_row = [False] * len(env_indices)
        self.ids: dict[Layout, tuple[int, tuple[bool, ...]]] = {}  # per layout: its id, which slots hold floats
        self.unannounced: dict[int, Layout] = {}

    def put(self, position: int, info: dict[str, Any]) -> dict[str, Any]:
        """Write the non-empty info of the slice's env at ``position`` into its row; return what is left to pickle.

        Returns:
            ``{}`` when the info is now in shared memory, else ``info`` itself.
        """
        layout = self._layout(info)
        if layout is None:
            self.clear(position)
            return info
        known = self.ids.get(layout)
        if known is None:
            known = self.ids[layout] = (_layout_id(layout), tuple(column.is_float for column in _columns(layout)))
            self.unannounced[known[0]] = layout
        layout_id, is_float = known
        ints, floats = self.ints[position], self.floats[position]
        for slot, (in_floats, value) in enumerate(zip(is_float, info.values(), strict=True)):
            if in_floats:
                floats[slot] = value
            else:
                ints[slot] = value
        self.layouts[position] = layout_id
        self.in_row[position] = True
        return {}

    def clear(self, position: int) -> None:
        """The env at ``position`` has no info in its row (none, or it raised, or it was not reset)."""
        if self.in_row[position]:
            self.layouts[position] = 0
            self.in_row[position] = False

    def announcements(self) -> dict[int, Layout]:
        """The layouts used since the last call and never announced (to send with the reply)."""
        announced = self.unannounced
        if announced:  # most steps announce nothing: no new dict for them
            self.unannounced = {}
        return announced

    @staticmethod
    def _layout(info: dict[str, Any]) -> Layout | None:
        if len(info) > MAX_INFO_VALUES:
            return None
        layout = []
        for key, value in info.items():
            kind = _kind(value)
            if kind is None or type(key) is not str:
                return None
            layout.append((key, kind))
        return tuple(layout)


class InfoReader:
    """The main process's side: batches the infos in the envs' rows with the pickled ones.

    Args:
        layouts: the pool's ``info_layouts``.
        values: the pool's ``info_values``.
    """

    def __init__(self, layouts: npt.NDArray[np.int64], values: npt.NDArray[np.int64]) -> None:
        self.layouts = layouts
        self.ints = values
        self.floats = values.view(np.float64)
        self.known: dict[int, tuple[_Column, ...]] = {}

    def learn(self, layouts: dict[int, Layout]) -> None:
        """Know the layouts an env slice announced."""
        for layout_id, layout in layouts.items():
            if layout_id not in self.known:
                self.known[layout_id] = _columns(layout)

    def batch(self, pickled: dict[int, dict[str, Any]]) -> dict[str, Any]:
        """The batched infos of every env: those in their rows, and the ``pickled`` ones (by env index).

        Example:
            >>> layouts, values = np.zeros(2, np.int64), np.zeros((2, MAX_INFO_VALUES), np.int64)
            >>> writer, reader = InfoWriter(layouts, values, range(2)), InfoReader(layouts, values)
            >>> writer.put(1, {"lives": 3})
            {}
            >>> reader.learn(writer.announcements())
            >>> reader.batch({})
            {'lives': array([0, 3]), '_lives': array([False,  True])}
        """
        ids = self.layouts
        if not self.known:  # no env has announced a layout yet: no row can hold an info
            return _batched(pickled, len(ids)) if pickled else {}
        if not pickled and ids[0] and ids.tobytes() == ids[:1].tobytes() * len(ids):
            # The usual case, tested cheaper than numpy's reductions do: every env's info has the same layout.
            return self._batch_one_layout(self.known[int(ids[0])], None)
        if not ids.any():
            return _batched(pickled, len(ids))
        present = ids != 0
        first = ids[present.argmax()]
        if not pickled and (ids[present] == first).all():
            return self._batch_one_layout(self.known[int(first)], present)
        infos = dict(pickled)
        for index in np.flatnonzero(present):
            infos[int(index)] = self.info(int(index))
        return _batched(infos, len(ids))

    def info(self, env_index: int) -> dict[str, Any]:
        """Env ``env_index``'s info as the env returned it, from its row (``{}`` if its row has none)."""
        layout_id = int(self.layouts[env_index])
        if not layout_id:
            return {}
        ints, floats = self.ints[env_index], self.floats[env_index]
        info: dict[str, Any] = {}
        for slot, column in enumerate(self.known[layout_id]):
            info[column.key] = column.as_value(floats[slot] if column.is_float else ints[slot])
        return info

    def _batch_one_layout(self, columns: tuple[_Column, ...], present: npt.NDArray[np.bool_] | None) -> dict[str, Any]:
        """Every env with an info has this layout: each key's column, zero where absent, and its mask.

        ``present`` says which envs have an info; None: all of them.
        """
        infos: dict[str, Any] = {}
        everywhere = present is None or bool(present.all())
        mask = np.ones(len(self.layouts), np.bool_) if present is None else present
        for slot, column in enumerate(columns):
            values = (self.floats if column.is_float else self.ints)[:, slot].astype(column.dtype)
            if not everywhere:
                values[~mask] = 0
            infos[column.key] = values
            infos["_" + column.key] = mask.copy()
        return infos


@dataclass(frozen=True)
class _Column:
    """One key of a layout: its batched dtype, whether its slot holds a float, and how a value is rebuilt."""

    key: str
    kind: str
    dtype: np.dtype[Any]
    is_float: bool

    def as_value(self, stored: np.generic) -> Any:
        """The value as the env returned it: a Python scalar, or a numpy scalar of its dtype."""
        if self.kind == "bool":
            return bool(stored)
        if self.kind == "int":
            return int(stored)
        if self.kind == "float":
            return float(stored)
        return self.dtype.type(stored)


def _columns(layout: Layout) -> tuple[_Column, ...]:
    columns = []
    for key, kind in layout:
        dtype = _PYTHON_DTYPES.get(kind) or np.dtype(kind)
        columns.append(_Column(key, kind, dtype, dtype.kind == "f"))
    return tuple(columns)


def _batched(infos: dict[int, dict[str, Any]], num_envs: int) -> dict[str, Any]:
    batched: dict[str, Any] = {}
    for index in sorted(infos):
        add_info(batched, infos[index], index, num_envs)
    return batched
