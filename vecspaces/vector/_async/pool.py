"""The worker processes of an AsyncVectorEnv, and the signalling with them.

Each worker owns a contiguous slice of envs. To give worker ``w`` a command, the main process writes the
command code into ``control.commands[w]``, releases ``command_ready[w]`` and sends the command's arguments (if
any) through the pipe. When the worker is done it sets ``control.finished[w]``, releases the one
``completions`` semaphore shared by all workers, and only then sends its reply (if ``control.has_reply[w]``).

What each worker is doing, as the main process sees it, is the state machine in ``inflight``.

The main process waits on ``completions`` (polling first, see ``waiting``), then takes the finished workers. A
worker's flag says it finished; a count only wakes the main process, since a worker can die between setting its
flag and releasing its count (see :meth:`WorkerPool._pay_owed`). Waits block in slices of ``WAIT_SLICE_SECONDS``
and check the busy workers' flags and lives after each, so neither a dead worker nor a lost count hangs the
pool. Three waits share this: :meth:`WorkerPool.collect` (until a condition holds, e.g. pool mode's batch),
:meth:`WorkerPool.collect_all` (every running worker, for a Gymnasium-style call) and
:meth:`WorkerPool.collect_quietly` (the fast path of a plain step: the counts, then every flag at once).
Between two blocking slices a wait is an interruption point (``interrupts.checkpoint``): the state is
consistent there, so a Ctrl-C that arrived meanwhile is raised there.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import cloudpickle

from vecspaces.error import WaitTimeoutError, WorkerDiedError
from vecspaces.vector._async.inflight import InFlight
from vecspaces.vector._async.info_slots import InfoReader
from vecspaces.vector._async.interrupts import checkpoint
from vecspaces.vector._async.pacing import Pacing
from vecspaces.vector._async.processes import (
    describe_death,
    describe_process,
    restart_failure,
    span,
    startup_death,
    startup_timeout,
    stop_processes,
)
from vecspaces.vector._async.protocol import Command, EnvError, Reply, load_reply, rebuild_error
from vecspaces.vector._async.shared import SharedStepMemory
from vecspaces.vector._async.waiting import WORKER_MAX_SPIN_SECONDS, poll
from vecspaces.vector._async.worker import WorkerConfig
from vecspaces.vector.vector_env import AutoresetMode

__all__ = ["WAIT_SLICE_SECONDS", "WorkerPool"]

# How often a blocked wait checks that the workers are alive: the bound on noticing a dead worker.
WAIT_SLICE_SECONDS = 0.05
BROKEN = "; the pool is now broken: close() it"


class WorkerPool:
    """Starts, commands, waits for, restarts and stops the workers.

    Args:
        ctx: the multiprocessing context.
        env_fns: every env factory of the vector env.
        slices: the env indices of each worker.
        memory: the shared memory the workers use.
        autoreset_mode: the vector env's autoreset mode.
        daemon: whether the workers are daemonic.
        target: the worker entry point.
        spin_seconds: the longest a wait polls before blocking.
        cpus: per worker, the CPU it pins itself to (None: not pinned).
        restart: whether a dead worker is restarted (else the pool becomes broken).
        restart_attempts: how many times in a row a dead worker's replacement may fail before the pool gives up.
        auto_pinning: the CPUs the workers are pinned to while that pays (see ``affinity``); None: never.
    """

    def __init__(
        self,
        ctx: Any,
        env_fns: list[Any],
        slices: list[range],
        memory: SharedStepMemory,
        autoreset_mode: AutoresetMode,
        daemon: bool,
        target: Callable[[WorkerConfig], None],
        spin_seconds: float,
        cpus: list[int | None],
        restart: bool,
        restart_attempts: int,
        auto_pinning: list[int] | None = None,
    ) -> None:
        self.ctx = ctx
        self.env_fns = env_fns
        self.slices = slices
        self.memory = memory
        self.control = memory.control()
        # The infos in shared memory, and the layouts the workers announced (see info_slots).
        self.info_reader = InfoReader(self.control.info_layouts, self.control.info_values)
        self.autoreset_mode = autoreset_mode
        self.daemon = daemon
        self.target = target
        self.spin_seconds = spin_seconds
        self.cpus = cpus
        self.restart = restart
        self.restart_attempts = restart_attempts
        self.num_workers = len(slices)
        self.all_workers = range(self.num_workers)
        # The flags of every worker after a command that none replied to (collect_quietly compares them at once).
        self._all_quiet = bytes(self.num_workers), bytes([1] * self.num_workers)
        self.processes: list[Any] = [None] * self.num_workers
        self.pacing = Pacing(spin_seconds, self.control.blocking, auto_pinning, self.processes)
        self.connections: list[Any] = [None] * self.num_workers
        self.command_ready: list[Any] = [None] * self.num_workers
        self.completions = ctx.Semaphore(0)
        self.inflight = InFlight()
        self.broken: str | None = None
        self.restarts = 0
        self.startup_timeout = 0.0
        self.threads_at_fork = 1  # threads of this process when it last started a worker
        # What each worker was last commanded, to redo it on a replacement: the arguments, and in pool mode the
        # envs it steps.
        self._payloads: dict[int, bytes | None] = {}
        self._selected: dict[int, list[int]] = {}
        # Per worker, the replacements started since it last finished a command (each that died has failed).
        self._unproven: dict[int, int] = {}

    # -- processes --------------------------------------------------------------------------------------

    def start(
        self, workers: Iterable[int], startup_timeout: float, restarted: bool = False, interruptible: bool = False
    ) -> list[dict[str, Any]]:
        """Start the given workers and wait for each to report its envs; return their descriptions in env order.

        ``restarted``: they replace dead workers, so each env reports its first result as a restart (see
        ``EnvRunner``). ``interruptible``: a Ctrl-C is raised while their envs build (see ``_handle_death``).
        """
        self.startup_timeout = startup_timeout
        workers = list(workers)
        for w in workers:
            parent_end, child_end = self.ctx.Pipe(duplex=True)
            self.command_ready[w] = self.ctx.Semaphore(0)
            config = WorkerConfig(
                worker_index=w,
                env_indices=self.slices[w],
                env_fns=cloudpickle.dumps([self.env_fns[i] for i in self.slices[w]]),
                autoreset_mode=self.autoreset_mode,
                memory=self.memory,
                command_ready=self.command_ready[w],
                completions=self.completions,
                connection=child_end,
                spin_seconds=min(self.spin_seconds, WORKER_MAX_SPIN_SECONDS),
                cpu=self.cpus[w],
                restarted=restarted,
            )
            process = self.ctx.Process(
                target=self.target, args=(config,), name=f"vecspaces-worker-{w}", daemon=self.daemon
            )
            self.threads_at_fork = threading.active_count()
            process.start()
            child_end.close()
            self.processes[w] = process
            self.connections[w] = parent_end
        descriptions: list[dict[str, Any]] = []
        deadline = time.monotonic() + startup_timeout
        try:
            for w in workers:
                status, payload = self._receive_startup(w, deadline, interruptible)
                if status == "failed":
                    raise rebuild_error(payload)
                descriptions.extend(payload)
        except BaseException:
            stop_processes([self.processes[w] for w in workers], 0.0)  # a failed restart leaves the others running
            raise
        return descriptions

    def _receive_startup(self, w: int, deadline: float, interruptible: bool) -> tuple[str, Any]:
        connection, process = self.connections[w], self.processes[w]
        while not connection.poll(WAIT_SLICE_SECONDS):
            if interruptible:
                checkpoint()
            if not process.is_alive():
                raise startup_death(w, process, self.slices[w], self.ctx.get_start_method())
            if time.monotonic() > deadline:
                method = self.ctx.get_start_method()
                raise startup_timeout(w, self.slices[w], self.startup_timeout, method, self.threads_at_fork)
        try:
            return connection.recv()
        except EOFError:
            process.join(1.0)
            raise startup_death(w, process, self.slices[w], self.ctx.get_start_method()) from None

    def worker_info(self) -> list[dict[str, Any]]:
        """Per worker: pid, env indices, whether it is alive and its resident memory in bytes."""
        return [describe_process(w, process, self.slices[w]) for w, process in enumerate(self.processes)]

    def close(self, grace: float, terminate: bool) -> list[EnvError]:
        """Let pending commands finish and send every worker ``CLOSE`` (``grace`` seconds each), then :meth:`stop`.

        With ``terminate`` (or a broken pool) the polite steps are skipped and the workers are stopped at once.
        Returns the errors the envs' ``close()`` raised.
        """
        errors: list[EnvError] = []
        if not terminate and self.broken is None:
            try:
                self.collect(self.idle, "close", grace)
                self.inflight.take_done()
                for w in self.all_workers:
                    self.dispatch(w, Command.CLOSE)
                self.collect(self.idle, "close", grace)
                errors = [error for _, reply in self.inflight.take_done().values() if reply for error in reply.errors]
            except Exception:
                pass  # closing must finish; whatever failed, the escalation in stop() ends the workers
        self.stop(0.0 if terminate else grace)
        return errors

    def stop(self, grace: float) -> None:
        """Stop every worker process (see :func:`stop_processes`) and close the pipes."""
        stop_processes(self.processes, grace)
        for connection in self.connections:
            if connection is not None:
                connection.close()

    # -- commands -------------------------------------------------------------------------------------------

    def dispatch(
        self, w: int, command: Command, payload: bytes | None = None, selected: list[int] | None = None
    ) -> None:
        """Give worker ``w`` a command (it must be IDLE): IDLE -> RUNNING.

        Args:
            w: the worker.
            command: the command.
            payload: its pickled arguments, if it has any.
            selected: for ``STEP_SELECTED`` (pool mode), the envs to step.

        Raises:
            WorkerDiedError: the worker died while idle (and restarting is off or failed); with restarting on,
                the new worker runs the command and its results are delivered like any other.
        """
        if not self.inflight.running:
            self._pay_owed()  # as in dispatch_all
        self.control.commands[w] = command
        self._payloads[w] = payload
        if selected is not None:
            self._selected[w] = selected
            self.control.stepping[selected] = 1
        self.inflight.start(w, command)
        self.command_ready[w].release()
        if payload is not None:
            try:
                self.connections[w].send_bytes(payload)
            except OSError:  # BrokenPipeError, ConnectionResetError: the worker is gone
                self._handle_death(w, command.name.lower())

    def dispatch_all(self, command: Command) -> None:
        """Give every worker ``command`` without arguments (they must all be IDLE)."""
        self._pay_owed()  # while no worker runs, a count that is not there is not another worker's
        self.control.commands.fill(command.value)  # an int fills several times faster than an enum
        self._payloads.clear()  # a restart redoes the command without arguments, not with an older command's
        self.inflight.start_all(self.all_workers, command)
        for ready in self.command_ready:
            ready.release()

    def idle(self) -> bool:
        """Whether no worker is RUNNING."""
        return self.inflight.idle()

    def collect(self, done: Callable[[], bool], call: str, timeout: float | None) -> None:
        """Wait for workers to finish until ``done()`` holds; each finished worker becomes DONE with its reply.

        Raises:
            WorkerDiedError: a running worker died (and restarting is off or failed).
            WaitTimeoutError: ``timeout`` passed first; the workers' commands stay pending.
        """
        started = time.perf_counter()
        deadline = None if timeout is None else time.monotonic() + timeout
        spin_until = self.pacing.spin_until(started)
        while True:
            self.take_finished()
            if done():
                break
            if self._await_completion(call, deadline, spin_until):
                self.inflight.owed -= 1
        self.pacing.record(time.perf_counter() - started)

    def collect_quietly(self, timeout: float | None) -> bool:
        """Wait for every running worker when each finishes with nothing to say; return whether that happened.

        The fast path of a plain step: completion counts only, every worker's flag cleared at once, no reply
        read, every worker IDLE again. False as soon as anything needs the general path (a worker with a reply,
        a blocking slice without news, the timeout passed): the counts taken so far are accounted, and
        :meth:`collect_all` takes over from where this stopped.
        """
        started = time.perf_counter()
        if not self._take_all_counts(started, timeout):
            return False
        control, inflight = self.control, self.inflight
        finished = control.finished
        # A count only wakes (a late one, see _pay_owed, could stand in for another's): the flags say who finished.
        # Every worker runs (dispatch_all), so all of them must have finished without a reply.
        if (control.has_reply.tobytes(), finished.tobytes()) != self._all_quiet:
            inflight.owed = -len(inflight.running)  # their counts were taken before collect_all sees their flags
            # The wait is over (collect_all only reads the replies): learn from all of it, as for a quiet step.
            self.pacing.record(time.perf_counter() - started)
            return False
        finished.fill(0)
        inflight.finish_all_quietly()
        self.pacing.record(time.perf_counter() - started)
        return True

    def collect_all(self, call: str, timeout: float | None) -> None:
        """Wait until no worker is RUNNING (a Gymnasium-style call); the replies wait in ``inflight``.

        The common case in few steps: one completion count per running worker (and any still owed), then every
        finished worker taken at once. A wait that outlasts a blocking slice (a slow env, a dead worker, a
        timeout to watch) carries on in :meth:`collect`.

        Raises:
            WorkerDiedError: a running worker died (and restarting is off or failed).
            WaitTimeoutError: ``timeout`` passed first; the workers' commands stay pending.
        """
        started = time.perf_counter()
        waits = len(self.inflight.running) + self.inflight.owed > 0  # not when collect_quietly took every count
        if not self._take_all_counts(started, timeout):
            elapsed = time.perf_counter() - started
            self.collect(self.idle, call, None if timeout is None else max(0.0, timeout - elapsed))
            return
        self._take_flags()  # their counts were taken above
        if not self.inflight.idle():  # not while every count belongs to a flag; wait the general way if it does
            self.collect(self.idle, call, timeout)
            return
        if waits:
            self.pacing.record(time.perf_counter() - started)

    def _take_all_counts(self, started: float, timeout: float | None) -> bool:
        """Take one completion count per running worker and every count still owed; False if that takes longer.

        On success nothing is owed any more.

        Polls first (as :meth:`collect` does), then blocks one slice at a time; stops at a slice without news
        or when ``timeout`` (from ``started``) has passed, with the counts taken so far paid in advance.
        """
        completions, inflight = self.completions, self.inflight
        wanted = len(inflight.running) + inflight.owed  # dispatch paid what was owed; a wait cut short may owe more
        taken = 0
        spin_until = self.pacing.spin_until(started)
        while taken < wanted:
            if poll(completions, spin_until):
                taken += 1
                continue
            elapsed = time.perf_counter() - started
            left = WAIT_SLICE_SECONDS if timeout is None else min(WAIT_SLICE_SECONDS, timeout - elapsed)
            if left > 0 and self.pacing.block(completions, left):
                taken += 1
                continue
            inflight.owed -= taken
            return False
        inflight.owed = 0
        return True

    def take_finished(self) -> None:
        """RUNNING -> DONE for every worker whose finished flag is set (their completion counts still owed)."""
        self.inflight.owed += self._take_flags()

    def _take_flags(self) -> int:
        """RUNNING -> DONE for every worker whose finished flag is set, reading its reply if it sent one.

        Returns how many there were, whose completion counts the caller accounts for.
        """
        control, inflight = self.control, self.inflight
        finished = control.finished
        ready = [w for w in inflight.running if finished[w]]
        for w in ready:
            finished[w] = 0
            if self._unproven:
                self._unproven.pop(w, None)
            if not control.has_reply[w]:
                inflight.finish(w, None)
                continue
            try:
                reply = self._read_reply(w, inflight.running[w])
            except _DiedSending:
                self._handle_death(w, "sending its reply")
                continue
            inflight.finish(w, reply)
        return len(ready)

    def _read_reply(self, w: int, command: Command) -> Reply:
        connection = self.connections[w]
        while not connection.poll(WAIT_SLICE_SECONDS):
            if not self.processes[w].is_alive():
                raise _DiedSending
        try:
            data = connection.recv_bytes()
        except (EOFError, OSError):  # it died in the middle of the message
            raise _DiedSending from None
        reply = load_reply(data, self.slices[w], command.name.lower())
        self.info_reader.learn(reply.info_layouts)
        return reply

    def _await_completion(self, call: str, deadline: float | None, spin_until: float) -> bool:
        """Take one completion count (True), first paying counts owed for workers already taken.

        False when a blocking slice ends with a running worker's flag set but no count for it (it is taken
        next), or with a running worker dead (restarted: it is RUNNING again, or finished just before it died:
        it is taken next).
        """
        inflight = self.inflight
        self._pay_owed()
        if poll(self.completions, spin_until):
            return True
        while True:
            checkpoint()  # between slices nothing is half-taken: a Ctrl-C that arrived meanwhile is raised here
            wait = WAIT_SLICE_SECONDS
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            if self.pacing.block(self.completions, wait):
                return True
            if any(self.control.finished[w] for w in inflight.running):
                return False  # finished without a count left for it (see _pay_owed): the caller takes it now
            for w in sorted(inflight.running):
                if not self.processes[w].is_alive():
                    if not self.control.finished[w]:
                        self._handle_death(w, inflight.running[w].name.lower(), interruptible=True)
                    return False
            if deadline is not None and time.monotonic() >= deadline:
                workers = sorted(inflight.running)
                raise WaitTimeoutError(
                    f"{call} timed out after waiting for workers {workers} "
                    f"(envs {', '.join(span(self.slices[w]) for w in workers)}); "
                    f"call {call} again to collect the late results, or close()"
                )

    def _pay_owed(self) -> None:
        """Take the completion counts owed for workers already taken, as far as they are there; forgive the rest.

        An owed count is normally waiting (a worker releases it right after setting its flag), but one whose worker
        died between the two never comes. Waiting for it would take another worker's count and leave that worker's
        wait without one (a pool-mode ``recv`` waited out its timeout). A forgiven count that comes late only wakes a
        later wait early: every wait checks the flags before it trusts a count.
        """
        inflight = self.inflight
        while inflight.owed > 0:
            if not self.completions.acquire(False):
                inflight.owed = 0
                return
            inflight.owed -= 1

    # -- death and restart -------------------------------------------------------------------------------

    def _handle_death(self, w: int, activity: str, interruptible: bool = False) -> None:
        """Replace dead RUNNING worker ``w`` and redo its command (it stays RUNNING), or break the pool and raise.

        The replacement's envs report their first result as a restart: reset, ``truncated`` and
        ``info["worker_restarted"]`` (see ``EnvRunner``); redoing a step steps nothing, a reset resets the envs it
        selects, a call is made on freshly reset envs. A replacement that dies too (while it builds its envs, or
        before it finishes a command) is replaced again, up to ``restart_attempts`` times in a row; the other
        workers carry on meanwhile.
        ``interruptible`` (from a wait): a Ctrl-C while the replacement builds stops it, uncounted, and is raised;
        the command stays RUNNING, so the next wait finds the worker dead and starts another.
        """
        command = self.inflight.running[w]
        self._bury(w)
        failure = describe_death(w, self.processes[w], self.slices[w], activity)
        failures = self._unproven.get(w, 0)  # the replacements that died before finishing a command
        while True:
            if not self.restart or command is Command.CLOSE or failures >= self.restart_attempts:
                if failures:
                    failure = restart_failure(w, self.slices[w], failures, failure)
                self.broken = failure + BROKEN
                del self.inflight.running[w]
                raise WorkerDiedError(self.broken)
            try:
                self.start([w], self.startup_timeout, restarted=True, interruptible=interruptible)
            except Exception as error:  # it died, timed out or raised while building its envs
                failures += 1
                failure = str(error)
                self._bury(w)
                continue
            self.restarts += 1
            self._unproven[w] = failures + 1
            selected = self._selected.get(w) if command is Command.STEP_SELECTED else None
            self.dispatch(w, command, self._payloads.get(w), selected)
            return

    def _bury(self, w: int) -> None:
        """Reap dead worker ``w``: give back a concurrency permit it held, close its pipe."""
        self.processes[w].join(0.1)
        if self.control.permits[w]:  # it died holding a concurrency permit: give it back for the others
            self.control.permits[w] = 0
            with contextlib.suppress(ValueError):  # it had released it after all
                self.memory.concurrency.release()
        self.connections[w].close()


class _DiedSending(Exception):
    """A worker died before its whole reply was through the pipe."""
