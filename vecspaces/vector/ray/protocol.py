"""What the driver and its agents say to each other: commands, answers, and the wire format of the socket.

Most steps are plain: the actions are one array of the batched action space, and the answer is one array of
observations, the rewards and the two flags, with no info and no error. Both ends know those arrays' dtypes and
shapes (a :class:`PlainStep`, made by the driver and handed to the agent when it opens its socket), so such a step
travels over the socket as the arrays' bytes after a one-byte tag: no pickling, and the driver's arrays are views
of the message; the observations of an agent on the driver's node go through shared memory instead (see
``shared_block``). Anything else is pickled.
"""

from __future__ import annotations

import functools
import math
import pickle
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces.spaces import Box, Discrete, MultiBinary, MultiDiscrete, Space
from vecspaces.vector._async.protocol import EnvError
from vecspaces.vector._gymnasium_facing import Face

__all__ = [
    "AgentCommand",
    "Answer",
    "Description",
    "PlainStep",
    "decode_answer",
    "decode_command",
    "encode_answer",
    "encode_command",
]


class AgentCommand(IntEnum):
    """A command to an agent's envs."""

    RESET = 1  # (seeds, options) for every env of the agent
    STEP = 2  # a batch of actions for every env of the agent
    STEP_SOME = 3  # pool mode: (actions, the agent's own indices of the envs to step)
    CALL = 4  # (name, args, kwargs)
    GET_ATTR = 5  # name
    SET_ATTR = 6  # (name, one value per env)
    RESTART_ROWS = 7  # a replacement's first results: its envs reset and reported as truncated


@dataclass
class Answer:
    """What an agent sends back for one command.

    Attributes:
        result: the local vector env's result (see :meth:`Agent.run`), or None after errors.
        errors: the errors raised while running the command, their env numbered in the whole vector env.
    """

    result: Any = None
    errors: list[EnvError] = field(default_factory=list)


@dataclass
class Description:
    """What the driver learns of an agent once its envs are built.

    Attributes:
        observation_spaces: each env's observation space.
        action_spaces: each env's action space.
        metadata: the first env's metadata (without ``autoreset_mode``).
        render_mode: the first env's render mode.
        face: what the vector env shows of Gymnasium, from the envs (see ``vecspaces.vector._gymnasium_facing``).
        node_id: the Ray node the agent runs on.
        host: that node's address.
        pid: the agent's process id.
    """

    observation_spaces: list[Space[Any]]
    action_spaces: list[Space[Any]]
    metadata: dict[str, Any]
    render_mode: str | None
    face: Face
    node_id: str
    host: str
    pid: int


_PICKLED, _PLAIN, _PLAIN_SHARED = b"K"[0], b"P"[0], b"S"[0]
_ARRAY_SPACES = (Box, Discrete, MultiBinary, MultiDiscrete)


@dataclass(frozen=True)  # not slots: cached_property needs __dict__
class PlainStep:
    """The arrays of one agent's plain step.

    Attributes:
        num_envs: the agent's envs.
        action_dtype: the batched actions' dtype.
        action_shape: the batched actions' shape.
        observation_dtype: the batched observations' dtype.
        observation_shape: the batched observations' shape.
        shared_path: the file in ``/dev/shm`` where the agent writes a step's observations, if it shares the
            driver's node (see ``shared_block``).
    """

    num_envs: int
    action_dtype: np.dtype[Any]
    action_shape: tuple[int, ...]
    observation_dtype: np.dtype[Any]
    observation_shape: tuple[int, ...]
    shared_path: str | None = None

    @staticmethod
    def of(single_observation: Space[Any], single_action: Space[Any], num_envs: int) -> PlainStep | None:
        """The plain step of ``num_envs`` envs of these spaces, or None if a batch of either is not one array."""
        if not (isinstance(single_observation, _ARRAY_SPACES) and isinstance(single_action, _ARRAY_SPACES)):
            return None
        assert single_observation.shape is not None and single_action.shape is not None
        return PlainStep(
            num_envs,
            np.dtype(single_action.dtype),
            (num_envs, *single_action.shape),
            np.dtype(single_observation.dtype),
            (num_envs, *single_observation.shape),
        )

    @functools.cached_property
    def observation_count(self) -> int:
        """The values in a batch of observations."""
        return math.prod(self.observation_shape)

    @functools.cached_property
    def observation_bytes(self) -> int:
        """The bytes of a batch of observations."""
        return self.observation_count * self.observation_dtype.itemsize

    @functools.cached_property
    def answer_size(self) -> int:
        """The bytes of a plain answer: the tag, observations, float64 rewards and two bool flags per env."""
        return 1 + self.observation_bytes + self.num_envs * (8 + 1 + 1)


def encode_command(plain: PlainStep | None, command: AgentCommand, payload: Any) -> bytes:
    """A command as the driver sends it."""
    if (
        plain is not None
        and command is AgentCommand.STEP
        and type(payload) is np.ndarray
        and payload.dtype == plain.action_dtype
        and payload.shape == plain.action_shape
    ):
        return bytes((_PLAIN,)) + payload.tobytes()
    return bytes((_PICKLED,)) + pickle.dumps((int(command), payload), protocol=pickle.HIGHEST_PROTOCOL)


def decode_command(plain: PlainStep | None, data: bytes) -> tuple[AgentCommand, Any]:
    """A command as the agent receives it."""
    if data[0] == _PLAIN and plain is not None:
        actions = np.frombuffer(data, plain.action_dtype, offset=1).reshape(plain.action_shape)
        return AgentCommand.STEP, actions
    code, payload = pickle.loads(memoryview(data)[1:])
    return AgentCommand(code), payload


def encode_answer(plain: PlainStep | None, answer: Answer, shared: npt.NDArray[Any] | None = None) -> list[Any]:
    """An answer as the agent sends it: the parts of one message.

    Args:
        plain: the plain step of the agent's socket.
        answer: the answer.
        shared: where a plain answer's observations go instead of the message (the agent's map of the shared
            block), or None.
    """
    result = answer.result
    if plain is not None and not answer.errors and type(result) is tuple and len(result) == 5:
        observations, rewards, terminations, truncations, infos = result
        if (
            not infos
            and type(observations) is np.ndarray
            and observations.dtype == plain.observation_dtype
            and observations.shape == plain.observation_shape
            and rewards.dtype == np.float64
        ):
            if shared is not None:
                shared[...] = observations
                return [bytes((_PLAIN_SHARED,)), rewards, terminations, truncations]
            return [bytes((_PLAIN,)), observations, rewards, terminations, truncations]
    return [bytes((_PICKLED,)), pickle.dumps((answer.result, answer.errors), protocol=pickle.HIGHEST_PROTOCOL)]


def decode_answer(plain: PlainStep | None, data: Any, shared: npt.NDArray[Any] | None = None) -> Answer:
    """An answer as the driver receives it.

    Args:
        plain: the plain step of the agent's socket.
        data: the message, bytes or a uint8 array (whose plain answers' arrays are then writable views of it).
        shared: the driver's read-only map of the shared block, if the agent has one: a plain answer's
            observations are then that view, valid until the agent's next step (joining the agents' batches
            copies them).
    """
    tag = data[0]
    if plain is None or tag not in (_PLAIN, _PLAIN_SHARED):
        return Answer(*pickle.loads(data[1:]))
    if tag == _PLAIN_SHARED:
        assert shared is not None
        observations, offset = shared, 1
    else:
        count = plain.observation_count
        observations = np.frombuffer(data, plain.observation_dtype, count, 1).reshape(plain.observation_shape)
        offset = 1 + plain.observation_bytes
    n = plain.num_envs
    rewards = np.frombuffer(data, np.float64, n, offset)
    terminations = np.frombuffer(data, np.bool_, n, offset + 8 * n)
    truncations = np.frombuffer(data, np.bool_, n, offset + 9 * n)
    return Answer((observations, rewards, terminations, truncations, {}))
