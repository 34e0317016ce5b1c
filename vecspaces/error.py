"""Every exception vecspaces raises, under one base class.

Each class also derives from the builtin a caller would naturally catch, so ``except ValueError`` keeps
working for code written against Gymnasium, and ``except vecspaces.error.Error`` catches everything of ours.
:class:`PerformanceWarning` is the warning of something around vecspaces that costs it speed.

Once the user has imported Gymnasium, every class here also derives from ``gymnasium.error.Error``, and the four
Gymnasium also defines (``AlreadyPendingCallError``, ``NoAsyncCallError``, ``ClosedEnvironmentError``,
``CustomSpaceError``) from its class of that name, so ``except gymnasium.error.NoAsyncCallError`` keeps catching
ours (``except`` matches by real inheritance only). The bases are added in place, once, when the first exception
is created after ``import gymnasium`` (or at import if it came first), so types, pickles and tracebacks stay ours.
vecspaces never imports gymnasium; without it nothing changes.

Messages follow one grammar, built by :func:`message`::

    <subject> <broken constraint>, expected <form>, got <value>[ at <path>][; <fix>]

for example ``Discrete n must be positive, expected an integer >= 1, got 0``.
"""

from __future__ import annotations

import copyreg
import multiprocessing
import reprlib
import sys
import threading
from typing import Any

import numpy as np

__all__ = [
    "AlreadyPendingCallError",
    "ClosedEnvironmentError",
    "CustomSpaceError",
    "CustomSpaceNotImplementedError",
    "EpisodeEndedError",
    "Error",
    "InvalidTypeError",
    "InvalidValueError",
    "NoAsyncCallError",
    "NotFlattenableError",
    "PerformanceWarning",
    "SpaceMismatchError",
    "WaitTimeoutError",
    "WorkerDiedError",
    "message",
    "show",
]


class _Root(Exception):
    """What :class:`Error` derives from until ``gymnasium.error.Error`` takes its place."""

    # Not Exception itself: Python reassigns __bases__ only between classes of one layout, and a builtin's
    # layout differs from that of every class written in Python, such as Gymnasium's.


class Error(_Root):
    """Base class of every exception raised by vecspaces."""


class InvalidValueError(Error, ValueError):
    """An argument has an acceptable type but a wrong value (shape, range, length, NaN, ...)."""


class InvalidTypeError(Error, TypeError):
    """An argument has the wrong type."""


class NotFlattenableError(Error, ValueError):
    """A space has no fixed-size flat vector form (it contains a Sequence or a Graph)."""


class CustomSpaceError(Error, TypeError):
    """An operation has no implementation for this kind of space; register one for it."""


class CustomSpaceNotImplementedError(CustomSpaceError, NotImplementedError):
    """An operation of the flatten family has no implementation for this kind of space; register one for it.

    The flatten family is ``flatdim``, ``flatten_space``, ``flatten``, ``unflatten`` and
    ``is_space_dtype_shape_equiv``. Gymnasium raises ``NotImplementedError`` there, so code written against
    it keeps working with ``except NotImplementedError``, and ``except CustomSpaceError`` (a ``TypeError``)
    catches it as for every other operation.
    """


class AlreadyPendingCallError(Error, RuntimeError):
    """An asynchronous call was started while another one is still pending.

    Attributes:
        name: the name of the pending call.
    """

    def __init__(self, msg: str, name: str) -> None:
        super().__init__(msg)
        self.name = name

    def __reduce__(self) -> tuple[Any, ...]:
        return _reduce_without_init(self)


class NoAsyncCallError(Error, RuntimeError):
    """A ``*_wait`` method was called without the matching ``*_async`` call.

    Attributes:
        name: the name of the missing asynchronous call.
    """

    def __init__(self, msg: str, name: str) -> None:
        super().__init__(msg)
        self.name = name

    def __reduce__(self) -> tuple[Any, ...]:
        return _reduce_without_init(self)


class ClosedEnvironmentError(Error, RuntimeError):
    """A method was called on a vector environment that is already closed."""


class WorkerDiedError(Error, RuntimeError):
    """A worker process ended while the pool was waiting for it."""


class WaitTimeoutError(Error, TimeoutError, multiprocessing.TimeoutError):
    """A wait for the workers passed its timeout; the call stays pending.

    Catchable as the builtin ``TimeoutError`` and as ``multiprocessing.TimeoutError`` (what Gymnasium raises).
    """


class SpaceMismatchError(Error, RuntimeError):
    """The sub-environments of a vector env have spaces that cannot be batched together."""


class PerformanceWarning(UserWarning):
    """A warning that something around vecspaces costs it speed; the message names the fix."""


class EpisodeEndedError(Error, RuntimeError):
    """A sub-environment was stepped after its episode ended, with autoreset disabled."""


def _reduce_without_init(error: BaseException) -> tuple[Any, ...]:
    """How to pickle and copy ``error``: its class's ``__new__`` with its args, then its attributes (and notes).

    BaseException's own reduce calls the class with the args, which fails when ``__init__`` takes others.
    """
    # copyreg.__newobj__ is what object.__reduce_ex__ uses (pickled as one NEWOBJ opcode); typeshed lacks it.
    return copyreg.__newobj__, (type(error), *error.args), error.__dict__  # type: ignore[attr-defined]


# Ours that also derive from Gymnasium's class of the same name once gymnasium is imported.
_ALSO_GYMNASIUM = (AlreadyPendingCallError, NoAsyncCallError, ClosedEnvironmentError, CustomSpaceError)
_deriving = threading.Lock()
_derived = False


def _derive_from_gymnasium() -> bool:
    """Add Gymnasium's exception classes to the bases of ours if gymnasium is imported (never imports it).

    Done once, and ``Error.__new__`` (:func:`_new_until_gymnasium`) deleted then. If Gymnasium's classes cannot be
    bases (a future Gymnasium), ours stay as they are: an exception must never fail to be created because of this.

    Returns:
        Whether it is done, now or before.
    """
    global _derived
    gymnasium_error = getattr(sys.modules.get("gymnasium"), "error", None)
    if gymnasium_error is None:  # hidden (None in sys.modules) or still being imported: tried again next time
        return False
    with _deriving:
        if _derived:  # by another thread
            return True
        before = {kind: kind.__bases__ for kind in (Error, *_ALSO_GYMNASIUM)}
        try:
            # Gymnasium's Error (which defines nothing) takes _Root's place. The others are appended: after ours
            # and the builtins in the method order, so their __init__ is never used.
            Error.__bases__ = (gymnasium_error.Error,)
            for cls in _ALSO_GYMNASIUM:
                also = getattr(gymnasium_error, cls.__name__, None)
                if isinstance(also, type) and not issubclass(cls, also):
                    cls.__bases__ = (*cls.__bases__, also)
        except Exception:
            for kind, bases in before.items():
                kind.__bases__ = bases
        _derived = True
        if "__new__" in vars(Error):
            del Error.__new__
    return True


def _new_until_gymnasium(cls: type[Error], *args: Any, **kwargs: Any) -> Error:
    """``Error.__new__`` while gymnasium is not imported: looks for it before creating each exception.

    Once defined, a ``__new__`` leaves Python's slower generic creation path behind even when deleted (about
    0.1 us more per exception), so it is not defined at all when gymnasium was imported before us.
    """
    if "gymnasium" in sys.modules:
        _derive_from_gymnasium()
    return super(Error, cls).__new__(cls, *args, **kwargs)


if not _derive_from_gymnasium():
    Error.__new__ = staticmethod(_new_until_gymnasium)  # type: ignore[method-assign, assignment]


_repr = reprlib.Repr()
_repr.maxstring = 60
_repr.maxother = 80
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = _repr.maxfrozenset = 8


def show(value: object) -> str:
    """Return a short, readable description of ``value`` for an error message.

    Arrays show their values (abbreviated), shape and dtype; other values show a truncated repr.

    Example:
        >>> show(np.zeros((3, 4), dtype=np.float32))
        'array of shape (3, 4) and dtype float32'
        >>> show("abc")
        "'abc' (str)"
    """
    if isinstance(value, np.ndarray):
        if value.size <= 8:
            values = np.array2string(value, separator=", ", threshold=8)
            return f"{values} (array of shape {value.shape} and dtype {value.dtype})"
        return f"array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, np.generic):
        return f"{value!r}"
    return f"{_repr.repr(value)} ({type(value).__name__})"


def message(problem: str, *, expected: str, got: str, at: str = "", fix: str = "") -> str:
    """Build an error message in the project's one grammar.

    Args:
        problem: the subject and the constraint it breaks, e.g. ``"Box low is above high"``.
        expected: the form that would have been accepted.
        got: what was given, usually ``show(value)``.
        at: the path of the offending value inside a nested structure, e.g. ``"obs['camera'][2]"``.
        fix: what the caller can do about it, when there is something to say.

    Returns:
        The message.

    Example:
        >>> message("Discrete n must be positive", expected="an integer >= 1", got="0")
        'Discrete n must be positive, expected an integer >= 1, got 0'
    """
    text = f"{problem}, expected {expected}, got {got}"
    if at:
        text += f" at {at}"
    if fix:
        text += f"; {fix}"
    return text
