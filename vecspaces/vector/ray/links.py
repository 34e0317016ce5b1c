"""How commands reach an agent and answers come back: over a direct socket, or as Ray actor calls.

Both transports keep a FIFO of the commands sent and not yet answered (pool mode may queue several), answer them
in order, and turn the agent's death into :class:`AgentDied` carrying what was seen of it.
"""

from __future__ import annotations

import contextlib
import select
from collections import deque
from multiprocessing import BufferTooShort
from multiprocessing.connection import Client, Connection
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces.vector.ray.protocol import AgentCommand, Answer, PlainStep, decode_answer, encode_command
from vecspaces.vector.ray.shared_block import SharedBlock

__all__ = ["AgentDied", "Link", "RayLink", "SocketLink", "wait_for_answers"]


class AgentDied(Exception):
    """The agent's process ended (or its node was lost) while a command was sent to it or pending."""


class Link:
    """One agent's channel: send commands, receive their answers in order.

    Attributes:
        actor: the agent's Ray actor handle (control calls go through it whatever the transport).
        pending: the commands sent and not yet answered, oldest first, each with what the caller attached.
    """

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.pending: deque[tuple[AgentCommand, Any]] = deque()

    def send(self, command: AgentCommand, payload: Any, note: Any = None) -> None:
        """Send a command; ``note`` comes back with its answer (see :meth:`receive`)."""
        raise NotImplementedError

    def receive(self) -> tuple[Answer, AgentCommand, Any]:
        """The answer to the oldest pending command (blocking), with the command and its note."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop using the channel (the agent's thread serving it exits)."""


class SocketLink(Link):
    """Commands and answers over the agent's ``multiprocessing.connection`` socket (see ``Agent.open_socket``).

    Args:
        actor: the agent's actor handle.
        address: where its socket listens.
        authkey: the key it expects.
        plain: its plain step, if its steps have one.
        block: the block of shared memory where it writes a step's observations, if it is on this node.
    """

    def __init__(
        self,
        actor: Any,
        address: tuple[str, int],
        authkey: bytes,
        plain: PlainStep | None,
        block: SharedBlock | None = None,
    ) -> None:
        super().__init__(actor)
        self.connection: Connection = Client(address, authkey=authkey)
        self.plain = plain
        self.answer_size = 0 if plain is None else plain.answer_size
        self.block = block
        self.shared = None
        if plain is not None and block is not None:
            self.shared = block.array(plain.observation_dtype, plain.observation_shape)
            self.shared.flags.writeable = False  # so that joining the agents' batches copies it out

    def send(self, command: AgentCommand, payload: Any, note: Any = None) -> None:
        """Send a command; ``note`` comes back with its answer."""
        try:
            self.connection.send_bytes(encode_command(self.plain, command, payload))
        except OSError as error:
            raise AgentDied(f"its socket refused the command ({error})") from None
        self.pending.append((command, note))

    def receive(self) -> tuple[Answer, AgentCommand, Any]:
        """The answer to the oldest pending command (blocking), with the command and its note."""
        # Into a fresh array, so that the observations of a plain answer are writable views of it.
        data: npt.NDArray[np.uint8] | bytes = np.empty(self.answer_size, dtype=np.uint8)
        try:
            data = data[: self.connection.recv_bytes_into(data)]
        except BufferTooShort as longer:
            data = longer.args[0]
        except (EOFError, OSError):
            raise AgentDied("its socket closed: the agent's process ended") from None
        command, note = self.pending.popleft()
        return decode_answer(self.plain, data, self.shared), command, note

    def close(self) -> None:
        """Hang up: the agent's thread serving the socket exits."""
        self.connection.close()
        if self.block is not None:
            self.shared = None
            self.block.close()


class RayLink(Link):
    """Every command an actor call (``Agent.run``); the answers come through Ray's object store."""

    def __init__(self, actor: Any) -> None:
        super().__init__(actor)
        self.results: deque[Any] = deque()  # the ObjectRef of each pending command
        self.fetched: list[Answer] = []  # the oldest one's answer, when wait_for_answers fetched it

    def send(self, command: AgentCommand, payload: Any, note: Any = None) -> None:
        """Call ``Agent.run`` with the command; ``note`` comes back with its answer."""
        self.results.append(self.actor.run.remote(command, payload))
        self.pending.append((command, note))

    def receive(self) -> tuple[Answer, AgentCommand, Any]:
        """The answer to the oldest pending call (blocking), with the command and its note."""
        import ray

        try:
            answer: Answer = self.fetched.pop() if self.fetched else ray.get(self.results[0])
        except ray.exceptions.RayActorError as error:
            raise AgentDied(f"Ray reports it dead: {_first_line(error)}") from None
        self.results.popleft()
        command, note = self.pending.popleft()
        return answer, command, note


def wait_for_answers(links: list[Link], timeout: float, every: bool = False) -> list[Link]:
    """The links among ``links`` whose oldest pending answer is ready (or whose agent died), waiting ``timeout``.

    Args:
        links: links with pending commands, all of one transport.
        timeout: the longest to wait, in seconds.
        every: the caller needs every answer: waiting until all are ready costs Ray calls fewer round trips.
    """
    if isinstance(links[0], SocketLink):
        return _ready_sockets([link for link in links if isinstance(link, SocketLink)], timeout)
    return _ready_calls([link for link in links if isinstance(link, RayLink)], timeout, every)


def _ready_sockets(links: list[SocketLink], timeout: float) -> list[Link]:
    by_fd = {link.connection.fileno(): link for link in links}
    try:
        ready, _, _ = select.select(list(by_fd), [], [], timeout)
    except ValueError:  # a closed connection's fd: let its receive report it
        return list(links)
    return [by_fd[fd] for fd in ready]


def _ready_calls(links: list[RayLink], timeout: float, every: bool) -> list[Link]:
    import ray

    by_reference = {link.results[0]: link for link in links if link.results}
    if not by_reference:
        return []
    references = list(by_reference)
    ready, _ = ray.wait(references, num_returns=len(references) if every else 1, timeout=timeout)
    if ready and not every:  # take every answer that is ready by now, not just the first
        ready, _ = ray.wait(references, num_returns=len(references), timeout=0)
    with contextlib.suppress(Exception):  # one call for all; an agent's death is raised by its own receive
        for reference, answer in zip(ready, ray.get(ready), strict=True):
            by_reference[reference].fetched.append(answer)
    return [by_reference[reference] for reference in ready]


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
