"""Signals that arrive while the pool's bookkeeping and its workers disagree wait until they agree again.

A Ctrl-C raises ``KeyboardInterrupt`` wherever the main process happens to be. Between releasing one worker's
command and the next, or between reading a worker's reply and recording it, that leaves the pool believing
something the workers do not: a worker commanded but never waited for, a reply read and lost. So the pool's
state changes run inside :func:`deferred`, and a signal handler (one installed in Python, such as the default
``KeyboardInterrupt`` one, or a user's that raises) that fires during one runs only when it ends.

Waits are the exception: a wait that blocks calls :func:`checkpoint` between its slices, where the state is
consistent, so Ctrl-C still ends a wait on a hung env within a slice.

The handlers of SIGINT and SIGTERM are wrapped while any pool is open (see :func:`watch`). A handler the user
installs later is wrapped in turn when the next deferred section starts: it runs for every signal, as
installed, only not in the middle of the pool's bookkeeping. Only the main thread runs signal handlers, so
deferring only matters there; in other threads :func:`deferred` does nothing.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # getsignal without signal.getsignal's enum conversion (hot path)
import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

__all__ = ["checkpoint", "deferred", "unwatch", "watch"]

_WRAPPED_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_MAIN_THREAD = threading.main_thread().ident
_get_ident = threading.get_ident

_Handler = Callable[[int, FrameType | None], Any]


class _Deferral:
    """How deep the main thread is in deferred sections, and the signals that arrived meanwhile."""

    def __init__(self) -> None:
        self.depth = 0
        # Per signal that arrived: its frame, and the handler the wrapper that caught it stands in front of.
        self.pending: list[tuple[int, FrameType | None, _Handler]] = []
        self.watchers = 0

    def __enter__(self) -> None:
        if _get_ident() == _MAIN_THREAD:
            if not self.depth and self.watchers and _an_unwrapped_handler():
                _wrap_handlers()  # a handler was installed since
            self.depth += 1

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if _get_ident() == _MAIN_THREAD:
            self.depth -= 1
            if self.pending and not self.depth:
                self.deliver()

    def deliver(self) -> None:
        """Run the handlers of the signals that arrived meanwhile (each signal once, in order of arrival)."""
        arrived: dict[int, tuple[FrameType | None, _Handler]] = {}
        for signum, frame, handler in self.pending:
            arrived.setdefault(signum, (frame, handler))
        self.pending.clear()
        for signum, (frame, handler) in arrived.items():
            handler(signum, frame)


_deferral = _Deferral()


def deferred() -> _Deferral:
    """A context in which the wrapped signals' handlers wait until it ends (or until a :func:`checkpoint`).

    Example:
        >>> with deferred():
        ...     pass  # a Ctrl-C here raises KeyboardInterrupt at the end of the block
    """
    return _deferral


def checkpoint() -> None:
    """Run the handlers of signals that arrived during the deferred sections around this point.

    Only call it where the pool's state is consistent: the waits, between two blocking slices.
    """
    if _deferral.pending and threading.get_ident() == _MAIN_THREAD:
        _deferral.deliver()


class _Wrapper:
    """The handler installed in front of ``wrapped``: runs it, or holds the signal back during a deferred section.

    One per handler wrapped, so that code which saved a wrapper and puts it back later (after installing a
    handler of its own for a while) gets the chain it saved.
    """

    def __init__(self, wrapped: _Handler) -> None:
        self.wrapped = wrapped

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if _deferral.depth:
            _deferral.pending.append((signum, frame, self.wrapped))
            return
        self.wrapped(signum, frame)


def watch() -> None:
    """Wrap the handlers of SIGINT and SIGTERM (once, however many pools are open); from the main thread only.

    Signals whose handler is not a Python function (ignored, the OS default, or installed outside Python) are
    left alone: they raise nothing in this process.
    """
    if threading.get_ident() != _MAIN_THREAD:
        return
    _deferral.watchers += 1
    _wrap_handlers()


def _an_unwrapped_handler() -> bool:
    """Whether a Python handler is installed in front of which no wrapper stands (checked at every deferral)."""
    for signum in _WRAPPED_SIGNALS:
        handler = _signal.getsignal(signum)
        if callable(handler) and type(handler) is not _Wrapper:
            return True
    return False


def _wrap_handlers() -> None:
    for signum in _WRAPPED_SIGNALS:
        handler = signal.getsignal(signum)
        if callable(handler) and not isinstance(handler, _Wrapper):
            signal.signal(signum, _Wrapper(handler))


def unwatch() -> None:
    """Undo one :func:`watch`; the last one puts the previous handlers back (unless the user replaced ours)."""
    if threading.get_ident() != _MAIN_THREAD or not _deferral.watchers:
        return
    _deferral.watchers -= 1
    if _deferral.watchers:
        return
    for signum in _WRAPPED_SIGNALS:
        handler = signal.getsignal(signum)
        while isinstance(handler, _Wrapper):
            handler = handler.wrapped
        if handler is not signal.getsignal(signum):
            signal.signal(signum, handler)
