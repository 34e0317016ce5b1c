"""Every exception vecspaces raises, under one base class.

Each class also derives from the builtin a caller would naturally catch, so ``except ValueError`` keeps
working for code written against Gymnasium, and ``except vecspaces.error.Error`` catches everything of ours.
:class:`PerformanceWarning` is the warning of something around vecspaces that costs it speed.

Messages follow one grammar, built by :func:`message`::

    <subject> <broken constraint>, expected <form>, got <value>[ at <path>][; <fix>]

for example ``Discrete n must be positive, expected an integer >= 1, got 0``.
"""

from __future__ import annotations

import multiprocessing
import reprlib

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


class Error(Exception):
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


class NoAsyncCallError(Error, RuntimeError):
    """A ``*_wait`` method was called without the matching ``*_async`` call.

    Attributes:
        name: the name of the missing asynchronous call.
    """

    def __init__(self, msg: str, name: str) -> None:
        super().__init__(msg)
        self.name = name


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
