"""What the main process and the workers say to each other: commands, replies and remote errors."""

from __future__ import annotations

import multiprocessing
import pickle
import traceback
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any

import cloudpickle
import numpy as np

if TYPE_CHECKING:
    from vecspaces.vector._async.info_slots import Layout

__all__ = [
    "ActionLeaves",
    "Command",
    "EnvError",
    "LOCAL",
    "RemoteTraceback",
    "Reply",
    "add_note",
    "capture_error",
    "load_reply",
    "note_more_errors",
    "pack_values",
    "raise_env_errors",
    "rebuild_error",
]


# The worker index of the envs the main process steps itself (``main_process_envs``).
LOCAL = -1


class Command(IntEnum):
    """A command to a worker. Its code is written to the worker's slot in shared memory."""

    STEP = 1  # every env of the worker's slice
    STEP_SELECTED = 2  # pool mode: the envs whose ``stepping`` flag is set
    RESET = 3
    CALL = 4
    GET_ATTR = 5
    SET_ATTR = 6
    CLOSE = 7


class RemoteTraceback(Exception):
    """The formatted traceback of an exception raised in a worker process; chained as ``__cause__``."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


@dataclass
class EnvError:
    """An exception raised by a sub-env (or by the worker on its behalf), ready to cross a pipe.

    Attributes:
        env_index: the sub-env that raised, or None when the worker itself failed.
        command: what the worker was doing.
        exception: the pickled exception (pickle bytes), or None if it could not be pickled and rebuilt.
        type_name: the exception's qualified type name, for the fallback.
        text: ``str()`` of the exception.
        traceback: the formatted traceback from the worker.
    """

    env_index: int | None
    command: str
    exception: bytes | None
    type_name: str
    text: str
    traceback: str


@dataclass
class ActionLeaves:
    """What a step command carries when actions have variable-size leaves (Sequence, Graph, custom spaces).

    The fixed-size leaves of those actions are in shared memory, as for any action; only these values travel
    with the command. (A step command may instead carry whole actions, ``{env index: action}``.)

    Attributes:
        values: per env index, the values of its action's variable-size leaves, in the order of the action
            layout's ``variable_leaves`` (what ``SharedBatch.write`` returned for it).
    """

    values: dict[int, tuple[Any, ...]]


@dataclass
class Reply:
    """What a worker sends through its pipe after a command, when there is anything to send.

    Attributes:
        results: per-env results of a call/get_attr, keyed by env index.
        infos: non-empty info dicts of a reset or step that are not in shared memory, keyed by env index.
        variable: values of the observation's variable-size leaves, keyed by env index.
        errors: the errors raised while running the command.
        info_layouts: the layouts of infos in shared memory that this worker uses for the first time, by id
            (see ``vecspaces.vector._async.info_slots``).
    """

    results: dict[int, Any] = field(default_factory=dict)
    infos: dict[int, dict[str, Any]] = field(default_factory=dict)
    variable: dict[int, list[Any]] = field(default_factory=dict)
    errors: list[EnvError] = field(default_factory=list)
    info_layouts: dict[int, Layout] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.results or self.infos or self.variable or self.errors or self.info_layouts)


@dataclass(frozen=True)
class Pickled:
    """A value of an info or a call result, pickled on its own (see :func:`pack_values`)."""

    data: bytes


# Values of these types unpickle wherever numpy imports; anything else might not (its class, its __reduce__).
_PLAIN_TYPES = frozenset((int, float, bool, str, bytes, type(None), complex))
_NESTED_TYPES = (dict, list, tuple)


def _is_plain(value: Any, depth: int = 0) -> bool:
    kind = type(value)
    if kind in _PLAIN_TYPES or isinstance(value, np.generic):
        return True
    if kind is np.ndarray:
        return bool(value.dtype.kind != "O")
    if kind in _NESTED_TYPES and depth < 3:
        items = value.items() if kind is dict else enumerate(value)
        return all(type(key) in _PLAIN_TYPES and _is_plain(item, depth + 1) for key, item in items)
    return False


def pack_values(reply: Reply) -> None:
    """In the worker: pickle apart each info value and call result that is not plain data.

    So that a value the main process fails to unpickle (its class is not importable there, its ``__reduce__``
    raises) is an error naming its env and key, while the rest of the reply arrives (see :func:`load_reply`).
    A value that cannot be pickled at all is left for the reply's own pickling to report.
    """
    for index, info in reply.infos.items():
        packed = {key: _packed(value) for key, value in info.items()}
        if any(packed[key] is not value for key, value in info.items()):
            reply.infos[index] = packed  # a new dict: the env may keep its own
    for index, result in reply.results.items():
        reply.results[index] = _packed(result)


def _packed(value: Any) -> Any:
    if _is_plain(value):
        return value
    try:
        return Pickled(cloudpickle.dumps(value))
    except Exception:
        return value


def load_reply(data: bytes, envs: range, activity: str) -> Reply:
    """Unpickle a worker's reply, and each value pickled apart; a failure becomes an env error, never raises.

    Args:
        data: the pickled reply, as the worker sent it.
        envs: the envs of the worker that sent it.
        activity: what the worker was doing, for the errors.
    """
    try:
        reply: Reply = pickle.loads(data)
    except Exception as error:
        return Reply(errors=[capture_error(error, envs.start, f"{activity} (unpickling its reply)")])
    for index, info in reply.infos.items():
        for key, value in list(info.items()):
            if type(value) is Pickled:
                unpacked = _unpacked(value, reply, index, f"{activity}, unpickling info[{key!r}]")
                if unpacked is _FAILED:
                    del info[key]
                else:
                    info[key] = unpacked
    for index, result in list(reply.results.items()):
        if type(result) is Pickled:
            unpacked = _unpacked(result, reply, index, f"{activity}, unpickling its result")
            if unpacked is _FAILED:
                del reply.results[index]
            else:
                reply.results[index] = unpacked
    return reply


_FAILED = object()


def _unpacked(value: Pickled, reply: Reply, index: int, what: str) -> Any:
    try:
        return pickle.loads(value.data)
    except Exception as error:
        reply.errors.append(capture_error(error, index, what))
        return _FAILED


def capture_error(error: BaseException, env_index: int | None, command: str) -> EnvError:
    """Pack the exception being handled so the main process can re-raise it with its remote traceback."""
    _explain_daemon_refusal(error)
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    # Packed as (type, args, attributes) and rebuilt without calling __init__: exceptions whose __init__
    # takes other arguments than their args survive the trip (Gymnasium fails to unpickle those).
    try:
        packed = cloudpickle.dumps((type(error), error.args, vars(error)))
        _unpack(packed)
        payload: bytes | None = packed
    except Exception:
        payload = None
    return EnvError(
        env_index, command, payload, f"{type(error).__module__}.{type(error).__qualname__}", str(error), text
    )


def _explain_daemon_refusal(error: BaseException) -> None:
    """Note the fix on multiprocessing's refusal to let a daemon worker's env start processes of its own."""
    if (
        isinstance(error, AssertionError)
        and "daemonic processes are not allowed to have children" in str(error)
        and multiprocessing.current_process().daemon
    ):
        add_note(
            error,
            "the env starts processes of its own, which a daemon worker may not: create the vector env with "
            "daemon=False (its workers still exit when the main process does)",
        )


def _unpack(payload: bytes) -> BaseException:
    kind, args, attributes = pickle.loads(payload)
    error: BaseException = kind.__new__(kind, *args)
    error.args = args
    if isinstance(error, SystemExit):
        SystemExit.__init__(error, *args)  # its exit code is set by __init__, not kept in its __dict__
    error.__dict__.update(attributes)
    return error


def rebuild_error(record: EnvError) -> BaseException:
    """The exception of ``record``, of its original type where possible, with the remote traceback chained.

    The env index and command are added as a note (shown under the message from Python 3.11 on, and matched by
    ``pytest.raises(match=)``), and are also the first line of the chained remote traceback.
    """
    where = f"env {record.env_index}" if record.env_index is not None else "the worker"
    context = f"raised by {where} during {record.command}"
    error: BaseException | None = None
    if record.exception is not None:
        try:
            error = _unpack(record.exception)
        except Exception:
            error = None
    if error is None:
        error = RuntimeError(f"{record.type_name}: {record.text}")
    error.__cause__ = RemoteTraceback(f"{context}\n\n{record.traceback}")
    add_note(error, context)
    return error


def add_note(error: BaseException, note: str) -> None:
    """Add a PEP 678 note (``BaseException.add_note`` exists only from Python 3.11)."""
    error.__notes__ = [*getattr(error, "__notes__", []), note]  # type: ignore[attr-defined]


def raise_env_errors(errors: list[EnvError]) -> None:
    """Raise the first of ``errors`` (by env index) as the env raised it, noting how many more; then forget them."""
    if not errors:
        return
    ordered = sorted(errors, key=lambda e: -1 if e.env_index is None else e.env_index)
    errors.clear()
    first = rebuild_error(ordered[0])
    note_more_errors(first, len(ordered) - 1)
    raise first


def note_more_errors(first: BaseException, more: int) -> None:
    """Note on the error raised for a call how many more envs raised in it, if any."""
    if more:
        add_note(first, f"{more} more env error(s) in this call")
