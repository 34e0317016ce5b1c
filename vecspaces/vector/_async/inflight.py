"""What each worker is doing, as the main process sees it: the pool's in-flight state.

Each worker is in one of three states::

    IDLE --dispatch--> RUNNING --its finished flag taken--> DONE --take_done--> IDLE
                          |
                          +--its process died--> RUNNING again (restarted, the command redone), or the pool broken

- IDLE: no command.
- RUNNING: commanded, and not yet seen finished (see ``WorkerPool`` for the flags and semaphores).
- DONE: finished; its reply, if it sent one, was read and is held here until the caller takes it.

Replies are held rather than handed to a callback inside the wait, so a wait that ends early (a timeout, a
Ctrl-C between two slices) loses nothing: the next wait finds them, and whoever takes them (the call in
progress, or pool mode) dispatches new work outside the wait.

``owed`` keeps the pool's account of completion counts (one per finished command, on a semaphore shared by
all workers): the counts of DONE or IDLE workers not yet acquired, minus counts acquired before the flag they
belong to was seen. Flags and counts are not taken in one step, so without it a count would either be taken
twice or drift.
"""

from __future__ import annotations

from vecspaces.vector._async.protocol import Command, Reply

__all__ = ["InFlight"]


class InFlight:
    """The RUNNING and DONE workers (a worker in neither is IDLE), and the completion counts owed."""

    def __init__(self) -> None:
        self.running: dict[int, Command] = {}
        self.done: dict[int, tuple[Command, Reply | None]] = {}
        self.owed = 0

    def start(self, w: int, command: Command) -> None:
        """IDLE -> RUNNING."""
        self.running[w] = command

    def start_all(self, workers: range, command: Command) -> None:
        """Every worker IDLE -> RUNNING (none may be running)."""
        self.running = dict.fromkeys(workers, command)

    def finish(self, w: int, reply: Reply | None) -> None:
        """RUNNING -> DONE, holding ``reply``."""
        self.done[w] = (self.running.pop(w), reply)

    def finish_all_quietly(self) -> None:
        """Every RUNNING worker -> IDLE at once, when none has a reply (the fast path of a plain step)."""
        self.running = {}

    def take_done(self) -> dict[int, tuple[Command, Reply | None]]:
        """DONE -> IDLE for every DONE worker; return their commands and replies."""
        done, self.done = self.done, {}
        return done

    def busy(self, w: int) -> bool:
        """Whether worker ``w`` is RUNNING or DONE (so it cannot take a new command yet)."""
        return w in self.running or w in self.done

    def has_done(self) -> bool:
        """Whether any worker is DONE."""
        return bool(self.done)

    def idle(self) -> bool:
        """Whether no worker is RUNNING (DONE ones may wait to be taken)."""
        return not self.running
