"""Worker processes seen from the outside: how one ended, what it uses, and stopping a group of them."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import psutil

from vecspaces.error import WaitTimeoutError, WorkerDiedError, message

__all__ = [
    "describe_death",
    "describe_process",
    "describe_this_process",
    "restart_failure",
    "span",
    "startup_death",
    "startup_timeout",
    "stop_processes",
]


def span(envs: range) -> str:
    """A readable range of env indices, e.g. ``4-7``."""
    return f"{envs.start}" if len(envs) == 1 else f"{envs.start}-{envs.stop - 1}"


def describe_death(w: int, process: Any, envs: range, activity: str) -> str:
    """How worker ``w`` ended during ``activity``, for a :class:`~vecspaces.error.WorkerDiedError`."""
    code = process.exitcode
    if code is None:
        how = "stopped answering"
    elif code < 0:
        name = signal.Signals(-code).name
        hint = " (killed: out of memory, or killed by a user)" if name == "SIGKILL" else ""
        how = f"died with {name}{hint}"
    else:
        how = f"exited with code {code}"
    return f"worker {w} (pid {process.pid}, envs {span(envs)}) {how} during {activity}"


def startup_death(w: int, process: Any, envs: range, start_method: str) -> WorkerDiedError:
    """The error of worker ``w``, dead before reporting on its envs, with the likely cause where its exit tells it."""
    failure = describe_death(w, process, envs, "construction")
    if process.exitcode == 1 and start_method != "fork":
        # An exception outside the worker's own code, which reports its errors: a worker that is not forked
        # first imports the main module, running its top level again (where it may not start processes).
        failure += (
            f", before reporting on its envs: a {start_method!r} worker first imports the main module, and that "
            f"failed (its traceback is printed above); if your script creates the vector env at its top level, "
            f"create it under `if __name__ == '__main__':`"
        )
    return WorkerDiedError(failure)


def restart_failure(w: int, envs: range, failures: int, last: str) -> str:
    """Why worker ``w`` stays dead: its replacements failed ``failures`` times in a row, the ``last`` time so."""
    times = "once" if failures == 1 else f"{failures} times in a row"
    return (
        f"worker {w} (envs {span(envs)}) could not be restarted: its replacement failed {times}, the last time: {last}"
    )


def startup_timeout(w: int, envs: range, seconds: float, start_method: str, threads: int) -> WaitTimeoutError:
    """The error of worker ``w``, still building its envs after ``seconds`` (``threads``: this process's then)."""
    fix = "raise startup_timeout if the envs are slow to build"
    others = threads - 1
    if start_method == "fork" and others:
        fix += (
            f"; this process ran {others} other thread{'s' if others > 1 else ''} when it forked the worker, and a "
            f"forked process hangs on any lock such a thread held: start the workers with context='forkserver' or "
            f"'spawn'"
        )
    return WaitTimeoutError(
        message(
            f"worker {w} (envs {span(envs)}) did not finish building its envs in time",
            expected=f"every env built within startup_timeout ({seconds:g} s)",
            got="no answer, the worker still running",
            fix=fix,
        )
    )


def describe_process(w: int, process: Any, envs: range) -> dict[str, Any]:
    """Worker ``w``'s pid, env indices, whether it is alive and its resident memory in bytes (None if not)."""
    alive = process is not None and process.is_alive()
    rss = None
    if alive:
        try:
            rss = psutil.Process(process.pid).memory_info().rss
        except psutil.Error:
            rss = None
    pid = None if process is None else process.pid
    return {"worker": w, "pid": pid, "envs": list(envs), "alive": alive, "rss": rss}


def describe_this_process(worker: int, envs: list[int]) -> dict[str, Any]:
    """This process, which steps ``envs`` itself, as an entry of ``worker_info``."""
    rss = psutil.Process().memory_info().rss
    return {"worker": worker, "pid": os.getpid(), "envs": envs, "alive": True, "rss": rss}


def stop_processes(processes: list[Any], grace: float) -> None:
    """Join the processes for ``grace`` seconds, then terminate, then kill what is left."""
    deadline = time.monotonic() + grace
    for process in processes:
        if process is not None:
            process.join(max(0.0, deadline - time.monotonic()))
    for escalate in ("terminate", "kill"):
        alive = [p for p in processes if p is not None and p.is_alive()]
        if not alive:
            return
        for process in alive:
            getattr(process, escalate)()
        for process in alive:
            process.join(1.0)
