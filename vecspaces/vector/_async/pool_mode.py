"""Pool mode (EnvPool-style): ``send(actions, env_ids)`` steps some envs, ``recv()`` returns the first to finish.

Each env is in one of four states::

    idle --send, its worker busy--> queued --its worker is free--> stepping --finished--> ready --recv--> idle
    idle --send, its worker idle--> stepping

- *queued*: sent an action while its worker was busy with other envs; the worker starts it when it is free.
- *stepping*: its worker runs its step (a worker steps the envs of one ``send`` at a time).
- *ready*: its step finished; it waits in finishing order for a ``recv``.

An env that raised goes back to idle (its error is raised by the next ``recv``). Autoreset works per env
exactly as in ``step``. Gymnasium-style calls are refused while any env is not idle. The envs the main process
steps itself (``main_process_envs``) are stepped inside ``send``, after the workers were given theirs, so they
are ready first.

The pool holds a worker's finished step (DONE, see ``inflight``) until :meth:`PoolMode.send` or
:meth:`PoolMode.recv` absorbs it: its envs become ready and the worker starts its queued envs. Work is only
dispatched there, never from inside the pool's wait.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import cloudpickle
import numpy as np
import numpy.typing as npt

from vecspaces.error import InvalidValueError, NoAsyncCallError, message, show
from vecspaces.vector._async.actions import ActionWriter
from vecspaces.vector._async.interrupts import checkpoint
from vecspaces.vector._async.observations import ObservationPath
from vecspaces.vector._async.pool import WorkerPool
from vecspaces.vector._async.protocol import LOCAL, ActionLeaves, Command, EnvError, Reply, raise_env_errors
from vecspaces.vector.infos import add_info

if TYPE_CHECKING:
    from vecspaces.vector._async.env_slice import EnvSlice

__all__ = ["PoolMode", "RecvResult"]

RecvResult = tuple[
    Any, npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any], npt.NDArray[np.int64]
]


class PoolMode:
    """The pool-mode state of every env, and ``send`` / ``recv`` over the worker pool.

    Args:
        pool: the worker pool.
        actions: writes the actions of the envs sent.
        observations: reads the observations of the envs received.
        worker_of: per env, the index of its worker (-1: the main process's own, in ``local``).
        batch_size: how many envs ``recv`` returns.
        errors: the env errors of the pool's replies, shared with the vector env.
        local: the envs the main process steps itself, or None.
    """

    def __init__(
        self,
        pool: WorkerPool,
        actions: ActionWriter,
        observations: ObservationPath,
        worker_of: npt.NDArray[np.int64],
        batch_size: int,
        errors: list[EnvError],
        local: EnvSlice | None = None,
    ) -> None:
        self.pool = pool
        self.local = local
        self.control = pool.control
        self.actions = actions
        self.observations = observations
        self.worker_of = worker_of
        self.num_envs = len(worker_of)
        self.batch_size = batch_size
        self.errors = errors
        self.in_flight: set[int] = set()  # queued or stepping
        self.ready: list[int] = []  # in finishing order
        self.queued: dict[int, list[int]] = {}  # per busy worker, the envs it starts next
        self.stepping: dict[int, list[int]] = {}  # per worker, the envs of its step
        self.infos: dict[int, dict[str, Any]] = {}  # per ready env, its step's info

    def active(self) -> bool:
        """Whether any env is not idle."""
        return bool(self.in_flight or self.ready)

    def busy_envs(self) -> list[int]:
        """The envs that are not idle, in order."""
        return sorted(self.in_flight | set(self.ready))

    def send(self, actions: Any, env_ids: Any) -> None:
        """Step the idle envs ``env_ids`` (default: all) with ``actions``; see ``AsyncVectorEnv.send``."""
        self._absorb()
        ids = self._check_env_ids(env_ids)
        messages = self.actions.write(actions, ids)
        if not self.in_flight:
            self.observations.own_buffer()
        by_worker: dict[int, list[int]] = {}
        for i in ids:
            by_worker.setdefault(int(self.worker_of[i]), []).append(i)
        busy = self.pool.inflight.busy
        blocked = [w for w in by_worker if busy(w) and w in messages]
        if blocked:
            raise InvalidValueError(
                message(
                    "send cannot queue actions with variable-size leaves",
                    expected="envs whose worker is idle",
                    got=f"envs {by_worker[blocked[0]]} of busy worker {blocked[0]}",
                    fix="recv() until that worker's envs are back",
                )
            )
        self.in_flight.update(ids)
        local = by_worker.pop(LOCAL, None)
        for w, envs in by_worker.items():
            if busy(w):
                self.queued.setdefault(w, []).extend(envs)
            else:
                self._dispatch_step(w, envs, messages.get(w))
        if local:
            self._step_locally(local, messages.get(LOCAL))

    def recv(self, timeout: float | None) -> RecvResult:
        """Wait for the first ``batch_size`` envs to finish; see ``AsyncVectorEnv.recv``."""
        count = min(self.batch_size, len(self.ready) + len(self.in_flight))
        if count == 0:
            raise NoAsyncCallError(
                message(
                    "recv has nothing to wait for",
                    expected="envs that were sent an action",
                    got="no env stepping or done",
                    fix="send() actions first",
                ),
                "send",
            )
        deadline = None if timeout is None else time.monotonic() + timeout
        pool = self.pool
        self._absorb()
        while len(self.ready) < count and not self.errors:
            pool.collect(pool.inflight.has_done, "recv", None if deadline is None else deadline - time.monotonic())
            self._absorb()
        checkpoint()  # a Ctrl-C that came during the wait is raised while the batch is still ready, not after
        raise_env_errors(self.errors)
        ids = self.ready[:count]
        del self.ready[:count]
        index = _as_index(ids)
        infos: dict[str, Any] = {}
        for position, i in enumerate(ids):
            add_info(infos, self.infos.pop(i, {}), position, len(ids))
        control = self.control
        return (
            self.observations.take(index),
            control.rewards[index].copy(),
            control.terminations[index].copy(),
            control.truncations[index].copy(),
            infos,
            np.array(ids, dtype=np.int64),
        )

    def _absorb(self) -> None:
        """Take the workers' finished steps: their envs become ready, and each freed worker starts its queue."""
        pool = self.pool
        pool.take_finished()
        for w, (_, reply) in pool.inflight.take_done().items():
            self._finished(self.stepping.pop(w), reply)
            queued = self.queued.pop(w, None)
            if queued:
                self._dispatch_step(w, queued, None)

    def _finished(self, envs: list[int], reply: Reply | None) -> None:
        """``envs`` finished their step with ``reply``: each becomes ready, or idle again if it raised."""
        failed = set()
        if reply is not None:
            for index, values in reply.variable.items():
                self.observations.receive(index, values)
            self.errors.extend(reply.errors)
            failed = {error.env_index for error in reply.errors}
        for i in envs:
            self.in_flight.discard(i)
            if i not in failed:
                self.ready.append(i)
                pickled = None if reply is None else reply.infos.get(i)
                self.infos[i] = pickled if pickled else self.pool.info_reader.info(i)

    def _step_locally(self, envs: list[int], arguments: ActionLeaves | None) -> None:
        """Step the main process's own ``envs`` now, while the workers step theirs."""
        assert self.local is not None
        self.control.stepping[envs] = 1
        try:
            reply = self.local.handle(Command.STEP_SELECTED, arguments)
        except BaseException:  # a KeyboardInterrupt or SystemExit of an env: they are idle again, not stuck
            self.control.stepping[envs] = 0
            self.in_flight.difference_update(envs)
            raise
        self._finished(envs, reply)

    def _check_env_ids(self, env_ids: Any) -> list[int]:
        ids = list(range(self.num_envs)) if env_ids is None else [int(i) for i in np.asarray(env_ids).reshape(-1)]
        problem = None
        if len(set(ids)) != len(ids):
            problem = "repeats an env"
        elif any(not 0 <= i < self.num_envs for i in ids):
            problem = "has an index out of range"
        elif any(i in self.in_flight or i in self.ready for i in ids):
            busy = sorted(i for i in ids if i in self.in_flight or i in self.ready)
            problem = f"names envs still stepping or not yet received ({busy})"
        if problem:
            raise InvalidValueError(
                message(
                    f"send env_ids {problem}",
                    expected=f"distinct idle env indices in [0, {self.num_envs})",
                    got=show(env_ids),
                    fix="send only envs returned by the last recv()",
                )
            )
        return ids

    def _dispatch_step(self, w: int, envs: list[int], arguments: ActionLeaves | None) -> None:
        self.stepping[w] = envs
        payload = None if arguments is None else cloudpickle.dumps(arguments)
        self.pool.dispatch(w, Command.STEP_SELECTED, payload, envs)


def _as_index(ids: list[int]) -> slice | list[int]:
    """A slice when ``ids`` are contiguous and ascending (so arrays index as views), else the list."""
    if ids and ids == list(range(ids[0], ids[0] + len(ids))):
        return slice(ids[0], ids[0] + len(ids))
    return ids
