"""The Gymnasium-style call in progress (``reset``, ``step``, ``call``, ``get_attr``, ``set_attr``).

A call starts by giving its command to every worker (:meth:`CallCycle.start`) and finishes when every worker
has answered (:meth:`CallCycle.finish`), taking their replies from the pool. The envs the main process steps
itself (``main_process_envs``) run at the finish, while the workers run theirs.

A synchronous call (``step``, ``reset``, ...) that an interrupt ends while it is pending is *abandoned*: its
results were never returned, so the next call collects and drops them before it starts, while ``*_wait`` still
collects them if called instead (see :meth:`CallCycle.drop_abandoned`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import cloudpickle

from vecspaces.vector._async.interrupts import checkpoint
from vecspaces.vector._async.observations import ObservationPath
from vecspaces.vector._async.pool import WorkerPool
from vecspaces.vector._async.protocol import LOCAL, Command, EnvError, Reply, raise_env_errors

if TYPE_CHECKING:
    from vecspaces.vector._async.env_slice import EnvSlice

__all__ = ["CallCycle"]

# The commands that write observations into the buffer chosen for them.
_WRITES_OBSERVATIONS = frozenset((Command.STEP, Command.RESET))


class CallCycle:
    """The pending call, its replies and env errors, and the main process's own envs.

    Args:
        local: the envs the main process steps itself, or None.
        num_envs: how many envs in all.

    ``pool`` and ``observations`` are set once they exist.
    """

    pool: WorkerPool
    observations: ObservationPath

    def __init__(self, local: EnvSlice | None, num_envs: int) -> None:
        self.local = local
        self.num_envs = num_envs
        self.pending: Command | None = None
        self.abandoned = False  # the pending call's caller was interrupted: nobody will collect it
        self.not_reset: list[int] = []  # the envs the pending reset leaves as they are
        self.replies: dict[int, Reply] = {}
        self.errors: list[EnvError] = []  # shared with pool mode
        self._local_pending: tuple[Command, Any] | None = None

    def slices(self) -> list[tuple[int, range]]:
        """``(worker, env indices)`` of every slice of envs; the main process's slice is worker ``LOCAL``."""
        slices = list(enumerate(self.pool.slices))
        return [(LOCAL, self.local.env_indices), *slices] if self.local is not None else slices

    def start(self, command: Command, arguments: dict[int, Any]) -> None:
        """Give ``command`` to every worker with its arguments, if any; the main process's envs run at the finish."""
        self.replies = {}
        self.pending = command
        self.abandoned = False
        pool = self.pool
        if not arguments:
            pool.dispatch_all(command)
        else:
            for w in range(pool.num_workers):
                payload = arguments.get(w)
                pool.dispatch(w, command, None if payload is None else cloudpickle.dumps(payload))
        if self.local is not None:
            self._local_pending = (command, arguments.get(LOCAL))

    def finish(self, command: Command, call: str, timeout: float | None) -> dict[int, Reply]:
        """Wait until every worker finished ``command`` (the pending one); return the replies.

        Raises:
            Exception: the first env error of the call, as the env raised it.
            WorkerDiedError: a worker died (and restarting is off or failed).
            WaitTimeoutError: ``timeout`` passed first; the call stays pending.
        """
        if self._local_pending is not None:
            # The main process's envs run while the workers run theirs.
            local_command, local_arguments = self._local_pending
            self._local_pending = None
            assert self.local is not None
            self._receive(LOCAL, self.local.handle(local_command, local_arguments))
        pool = self.pool
        pool.collect_all(call, timeout)
        checkpoint()  # a Ctrl-C that came during the wait is raised before the results are taken, not after
        for w, (_, reply) in pool.inflight.take_done().items():
            self._receive(w, reply)
        self.pending = None
        replies, self.replies = self.replies, {}
        if command in _WRITES_OBSERVATIONS:
            # Envs that did not write this time keep their last observation (the envs of a restarted worker
            # were all reset anew).
            stale = [error.env_index for error in self.errors if error.env_index is not None]
            if command is Command.RESET:
                stale += self.not_reset
            self.observations.settle(stale)
        raise_env_errors(self.errors)
        return replies

    def drop_abandoned(self, timeout: float | None) -> None:
        """Finish an abandoned call and drop its results, so that a new call can start.

        Raises:
            Exception: an env error of the abandoned call (the call is over all the same).
            WaitTimeoutError: ``timeout`` passed first; the abandoned call stays pending.
        """
        if self.pending is not None and self.abandoned:
            self.finish(self.pending, f"{self.pending.name.lower()} (interrupted before)", timeout)

    def _receive(self, w: int, reply: Reply | None) -> None:
        """Take worker ``w``'s reply (None: the worker had nothing to say)."""
        if reply is None:
            return
        for index, values in reply.variable.items():
            self.observations.receive(index, values)
        self.errors.extend(reply.errors)
        self.replies[w] = reply

    def infos(self, replies: dict[int, Reply]) -> dict[str, Any]:
        """The batched infos of the call just finished: those in shared memory and those in the replies."""
        if not replies:  # the common case: every info is in shared memory, or there is none
            return self.pool.info_reader.batch({})
        pickled = {index: info for reply in replies.values() for index, info in reply.infos.items()}
        return self.pool.info_reader.batch(pickled)

    def results(self, replies: dict[int, Reply]) -> tuple[Any, ...]:
        """One result per env (of ``call`` or ``get_attr``)."""
        results: dict[int, Any] = {}
        for reply in replies.values():
            results.update(reply.results)
        return tuple(results.get(index) for index in range(self.num_envs))
