"""Which call of an ``AsyncVectorEnv`` (or a ``RayVectorEnv``) may run now, and the error that says why not.

A Gymnasium-style call (``reset``, ``step``, ``call``, ...) may start while the env is open, its pool is not
broken, no other such call is pending and no env is in pool mode. Its ``*_wait`` needs that call pending. Pool
mode (``send``/``recv``) needs no Gymnasium-style call pending.

Every public call runs through :func:`deferring_signals`: signal handlers wait for the end of the call or for a
wait (see ``interrupts``), and a call that an interrupt ends while it is pending is *abandoned*: its caller
never got its results, so the next call collects and drops it, while ``*_wait`` still returns it.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from vecspaces.error import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    Error,
    NoAsyncCallError,
    WorkerDiedError,
)
from vecspaces.vector._async import interrupts

__all__ = ["CallGate", "deferring_signals"]

Method = TypeVar("Method", bound=Callable[..., Any])
DEFERRAL = interrupts.deferred()


def deferring_signals(method: Method) -> Method:
    """Run a method of an object with a ``_gate`` with signals deferred, abandoning the call it interrupts.

    A performance warning its waits found due is issued once it returned (see ``busy_threads``).
    """

    @functools.wraps(method)
    def deferring(self: Any, *args: Any, **kwargs: Any) -> Any:
        with DEFERRAL:
            try:
                result = method(self, *args, **kwargs)
            except BaseException as error:
                self._gate.abandon_on(error)
                raise
        self._gate.pool.pacing.busy_threads.warn_if_due()
        return result

    return deferring  # type: ignore[return-value]


class Calls(Protocol):
    """The Gymnasium-style call in progress (``CallCycle`` over workers, ``AgentCalls`` over Ray agents)."""

    pending: Any  # its command, or None
    abandoned: bool  # an interrupt ended it for its caller

    def drop_abandoned(self, timeout: float | None) -> None:
        """Collect and drop the pending call if it is abandoned."""


class Pool(Protocol):
    """What runs the envs (``WorkerPool``, or the ``Crew`` of Ray agents)."""

    broken: str | None  # why it can run nothing any more


class PoolMode(Protocol):
    """The state of ``send``/``recv``."""

    def active(self) -> bool:
        """Whether any env is sent and not received."""

    def busy_envs(self) -> list[int]:
        """The envs sent and not received, in order."""


class CallGate:
    """The rules of which call may run, over the call cycle, the pool and pool mode.

    Args:
        calls: the Gymnasium-style call cycle.
        pool: the worker pool (or the crew of Ray agents).
        owner: the vector env's class name, for the errors.

    ``pool_mode`` is set once it exists.
    """

    pool_mode: PoolMode

    def __init__(self, calls: Calls, pool: Pool, owner: str = "AsyncVectorEnv") -> None:
        self.calls = calls
        self.pool = pool
        self.owner = owner
        self.closed = False
        self.owner_pid = os.getpid()
        self.inherited = False  # a copy in a child forked from the env's process (see ``forks``)

    def inherit(self) -> None:
        """This is the copy of a child forked from the env's process: no call may run here (see ``forks``)."""
        self.inherited = self.closed = True

    def can_start(self) -> bool:
        """Whether a Gymnasium-style call may start right now (nothing to collect first)."""
        return (
            not self.closed and self.pool.broken is None and self.calls.pending is None and not self.pool_mode.active()
        )

    def close(self) -> None:
        """The env closes: no call may start any more.

        Warns, as Gymnasium does, if that drops the results of a pending call its caller may still collect (not
        one an interrupt abandoned or a dead worker broke: its caller got the exception that ended it).
        """
        pending = self.calls.pending
        if pending is not None and not self.calls.abandoned and self.pool.broken is None and not self.closed:
            name = pending.name.lower()
            warnings.warn(
                f"{self.owner}.close() was called while a {name} is pending: its results are dropped; call "
                f"{name}_wait() before close() to keep them",
                UserWarning,
                stacklevel=4,  # the caller of close (close -> close_extras -> here)
            )
        self.closed = True

    def abandon_on(self, error: BaseException) -> None:
        """Mark the pending call abandoned if ``error`` ends it for its caller (anything but a vecspaces error)."""
        if not isinstance(error, Error) and not self.closed and self.calls.pending is not None:
            self.calls.abandoned = True

    def check_usable(self, call: str) -> None:
        """Raise if the env is closed, its pool broken, or this process a forked child of the env's."""
        self.check_not_inherited(call)
        if self.closed:
            raise ClosedEnvironmentError(f"{call} was called on a closed {self.owner}; create a new one")
        if self.pool.broken is not None:
            raise WorkerDiedError(self.pool.broken)

    def check_not_inherited(self, call: str) -> None:
        """Raise if this process is a child forked from the env's: the workers are the parent's."""
        if self.inherited:
            raise ClosedEnvironmentError(
                f"{call} was called in process {os.getpid()} on a copy of an {self.owner} that it inherited by "
                f"fork() from process {self.owner_pid}: the workers belong to that process; create a new "
                f"{self.owner} in this one"
            )

    def check_can_start(self, call: str, timeout: float | None) -> None:
        """Raise the error that says why ``call`` may not start now; an abandoned call is collected first.

        Args:
            call: the call, for the error.
            timeout: bounds collecting an abandoned call.
        """
        self.check_usable(call)
        self.calls.drop_abandoned(timeout)
        self.check_no_pending_call(call)
        if self.pool_mode.active():
            raise AlreadyPendingCallError(
                f"{call} was called while envs {self.pool_mode.busy_envs()} are in pool mode; "
                f"recv() their results first",
                "send",
            )

    def check_can_finish(self, command: Any, call: str) -> None:
        """Raise unless ``command`` is the pending call, so that ``call`` (its ``*_wait``) may collect it."""
        self.check_usable(call)
        if self.calls.pending is not command:
            name = command.name.lower()
            raise NoAsyncCallError(f"{call} was called without a pending {name}; call {name}_async() first", name)

    def check_can_send(self, timeout: float | None) -> None:
        """Raise unless pool mode may send: no Gymnasium-style call pending."""
        self.check_usable("send")
        self.calls.drop_abandoned(timeout)
        self.check_no_pending_call("send")

    def check_no_pending_call(self, call: str) -> None:
        """Raise if a Gymnasium-style call is pending."""
        if self.calls.pending is not None:
            pending = self.calls.pending.name.lower()
            raise AlreadyPendingCallError(
                f"{call} was called while a {pending} is pending; call {pending}_wait() first "
                f"(it also collects results that arrived after a timeout)",
                pending,
            )
