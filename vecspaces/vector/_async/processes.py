"""Worker processes seen from the outside: how one ended, what it uses, and stopping a group of them."""

from __future__ import annotations

import signal
import time
from typing import Any

import psutil

__all__ = ["describe_death", "describe_process", "span", "stop_processes"]


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
