"""The agent: a Ray actor that runs a local :class:`~vecspaces.vector.AsyncVectorEnv` over a slice of the envs.

It runs in a Ray worker process and imports nothing of Ray: the driver wraps it with ``ray.remote``. Every
command to its envs goes through :meth:`Agent.run`, called by the driver as an actor method (``transport="ray"``)
or read from the agent's socket by a thread of its own (``transport="socket"``, see :meth:`Agent.open_socket`).
A command's answer is a ``protocol.Answer``: its result, or the errors of the envs that raised, numbered in the
whole vector env.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing import forkserver
from multiprocessing.connection import Connection, Listener
from typing import Any

import numpy as np

from vecspaces._ops.batch import concatenate, create_empty_array
from vecspaces.vector._async.processes import describe_this_process
from vecspaces.vector._async.protocol import EnvError, RemoteTraceback, capture_error
from vecspaces.vector._async.waiting import WORKER_MAX_SPIN_SECONDS
from vecspaces.vector._async.worker import run_worker
from vecspaces.vector._spaces import as_vecspaces_space
from vecspaces.vector.async_vector_env import AsyncVectorEnv
from vecspaces.vector.ray.placement import local_pool
from vecspaces.vector.ray.protocol import (
    AgentCommand,
    Answer,
    Description,
    PlainStep,
    decode_command,
    encode_answer,
)
from vecspaces.vector.ray.shared_block import SharedBlock
from vecspaces.vector.sync_vector_env import SyncVectorEnv

__all__ = ["Agent"]


# How the local pool names the env that raised (see vecspaces.vector._async.protocol.rebuild_error).
_LOCAL_ENV_NOTE = re.compile(r"raised by env (\d+) during (.+)")


class Agent:
    """Runs envs ``first .. first + len(env_fns) - 1`` of a vector env in a local pool (in a Ray actor).

    Created empty, so that a standby agent can wait, warmed up, to replace one that dies: :meth:`start` gives it
    its envs.
    """

    def __init__(self) -> None:
        self.env_fns: list[Callable[[], Any]] = []
        self.first = 0
        self.pool_options: dict[str, Any] = {}
        self.envs: AsyncVectorEnv | SyncVectorEnv | None = None
        # The socket thread and Ray's calls (worker_info, close) both reach the envs.
        self.lock = threading.Lock()
        self.listener: Listener | None = None

    def warm(self, context: str) -> None:
        """Be ready to start quickly: import what a start needs and start the forkserver of local pools."""
        if context == "forkserver":
            _prepare_forkserver()
            multiprocessing.get_context("forkserver")
            forkserver.ensure_running()

    def start(
        self, env_fns: Sequence[Callable[[], Any]], first: int, pool_options: dict[str, Any], cpus: int | None = None
    ) -> Description | Answer:
        """Build the envs; return their description, or an :class:`Answer` holding the error that stopped it.

        Args:
            env_fns: the agent's slice of the vector env's ``env_fns``.
            first: the index of its first env in the whole vector env.
            pool_options: keyword arguments of the local ``AsyncVectorEnv``; its ``num_workers`` is None unless
                ``workers_per_agent`` gave it.
            cpus: the CPUs the agent has for its envs (None: its node's physical cores), which decide the local
                pool when ``num_workers`` is None (see ``placement.local_pool``).
        """
        self.env_fns, self.first = list(env_fns), first
        workers, own = local_pool(len(self.env_fns), pool_options["num_workers"], cpus)
        self.pool_options = {**pool_options, "num_workers": workers, "main_process_envs": own if workers else 0}
        try:
            envs = self.envs = self._build()
            observation_spaces, action_spaces = envs.get_attr("observation_space"), envs.get_attr("action_space")
            return Description(
                [as_vecspaces_space(space, "observation_space") for space in observation_spaces],
                [as_vecspaces_space(space, "action_space") for space in action_spaces],
                {key: value for key, value in envs.metadata.items() if key != "autoreset_mode"},
                envs.render_mode,
                envs._face,
                _node_id(),
                _host_address(),
                os.getpid(),
            )
        except BaseException as error:
            return Answer(errors=[self._record(error, "building its envs")])

    def _build(self) -> AsyncVectorEnv | SyncVectorEnv:
        options = self.pool_options
        if options["num_workers"] == 0:
            return SyncVectorEnv(
                self.env_fns,
                copy=False,
                observation_mode=options["observation_mode"],
                autoreset_mode=options["autoreset_mode"],
            )
        if options["context"] == "forkserver":
            _prepare_forkserver()
        return AsyncVectorEnv(self.env_fns, **options)

    def run(self, command: AgentCommand, payload: Any) -> Answer:
        """Run one command on the agent's envs.

        Results: RESET ``(observations, infos)``; STEP and RESTART_ROWS ``(observations, rewards, terminations,
        truncations, infos)``; STEP_SOME the same over the envs stepped; CALL and GET_ATTR one value per env;
        SET_ATTR None.
        """
        with self.lock:
            envs = self.envs
            if envs is None:
                return Answer(errors=[self._record(RuntimeError("the agent's envs are closed"), command.name)])
            try:
                return Answer(self._run(envs, command, payload))
            except BaseException as error:
                return Answer(errors=[self._record(error, command.name.lower())])

    def _run(self, envs: AsyncVectorEnv | SyncVectorEnv, command: AgentCommand, payload: Any) -> Any:
        if command is AgentCommand.STEP:
            return envs.step(payload)
        if command is AgentCommand.RESET:
            seeds, options = payload
            mask = options.get("reset_mask")
            if mask is not None and not np.any(mask):  # a masked reset of other agents' envs only
                return _current_observations(envs), {}
            return envs.reset(seed=seeds, options=options)
        if command is AgentCommand.STEP_SOME:
            actions, env_ids = payload
            if isinstance(envs, SyncVectorEnv):
                return (*envs._step_selected(actions, env_ids), [self.first + i for i in env_ids])
            envs.send(actions, env_ids)
            *results, returned = envs.recv()  # every env sent: the local batch size is all of them
            return (*results, [self.first + int(i) for i in returned])
        if command is AgentCommand.CALL:
            name, args, kwargs = payload
            return envs.call(name, *args, **kwargs)
        if command is AgentCommand.GET_ATTR:
            return envs.get_attr(payload)
        if command is AgentCommand.SET_ATTR:
            name, values = payload
            envs.set_attr(name, list(values))
            return None
        if command is AgentCommand.RESTART_ROWS:
            observations, infos = envs.reset()
            flags = np.ones(envs.num_envs, dtype=np.bool_)
            infos = {**infos, "worker_restarted": flags, "_worker_restarted": flags.copy()}
            return observations, np.zeros(envs.num_envs), ~flags, flags, infos
        raise AssertionError(command)

    def _record(self, error: BaseException, doing: str) -> EnvError:
        """The error, its env numbered in the whole vector env (the local pool numbers the agent's envs from 0)."""
        notes: list[str] = list(getattr(error, "__notes__", []))
        env_index = None
        for position, note in enumerate(notes):
            found = _LOCAL_ENV_NOTE.fullmatch(note)
            if found:
                env_index, doing = self.first + int(found[1]), found[2]
                del notes[position]
                error.__notes__ = notes  # type: ignore[attr-defined]
                cause = error.__cause__
                if isinstance(cause, RemoteTraceback):
                    header = f"raised by env {env_index} during {doing}"
                    error.__cause__ = RemoteTraceback(_LOCAL_ENV_NOTE.sub(header, cause.text, count=1))
                break
        else:
            if self.first:
                notes.append(f"the envs named above are numbered within the agent, whose env 0 is env {self.first}")
                error.__notes__ = notes  # type: ignore[attr-defined]
        return capture_error(error, env_index, doing)

    def worker_info(self) -> list[dict[str, Any]]:
        """The local pool's workers (their envs numbered in the whole vector env)."""
        with self.lock:
            if self.envs is None:
                return []
            if isinstance(self.envs, SyncVectorEnv):  # the agent steps its envs itself
                return [describe_this_process(0, list(self._envs()))]
            info = self.envs.worker_info()  # the agent's own envs first, as worker -1, if it steps some
        for worker in info:
            worker["envs"] = [self.first + i for i in worker["envs"]]
        return info

    def _envs(self) -> range:
        return range(self.first, self.first + len(self.env_fns))

    def open_socket(self, plain: PlainStep | None) -> tuple[tuple[str, int], bytes]:
        """Listen on a free port; serve the one connection that brings the returned authkey, in a thread.

        Args:
            plain: the arrays of a plain step, which travel as raw bytes (see ``protocol``); with its
                ``shared_path``, the observations of a step are written there (mapped before this returns).

        Returns:
            The address to connect to, and the authkey (random, known only to the driver that asked).
        """
        block = None
        if plain is not None and plain.shared_path is not None:
            with contextlib.suppress(OSError):  # then they travel on the socket, as from another node
                block = SharedBlock(plain.shared_path, plain.observation_bytes, create=False)
        authkey = os.urandom(32)
        self.listener = Listener((_host_address(), 0), authkey=authkey, backlog=1)
        serve = threading.Thread(
            target=self._serve, args=(self.listener, plain, block), daemon=True, name="vecspaces-agent"
        )
        serve.start()
        address: tuple[str, int] = self.listener.address
        return address, authkey

    def _serve(self, listener: Listener, plain: PlainStep | None, block: SharedBlock | None) -> None:
        """Answer the driver's commands, one at a time, until it hangs up (the block unmaps with this frame)."""
        shared = None
        if plain is not None and block is not None:
            shared = block.array(plain.observation_dtype, plain.observation_shape)
        try:
            connection: Connection = listener.accept()
        except OSError:  # closed before the driver connected, or a client without the authkey
            return
        finally:
            listener.close()  # one driver per agent: nothing else may connect
        with connection:
            while True:
                # As a local worker does: the next command usually comes while the driver reads this answer.
                deadline = time.perf_counter() + WORKER_MAX_SPIN_SECONDS
                while time.perf_counter() < deadline and not connection.poll():
                    pass
                try:
                    command, payload = decode_command(plain, connection.recv_bytes())
                except (EOFError, OSError):
                    return
                answer = self.run(command, payload)
                # Only a step's: the driver has read the last one before it sends the next (see shared_block).
                parts = encode_answer(plain, answer, shared if command is AgentCommand.STEP else None)
                connection.send_bytes(b"".join(parts))

    def ping(self) -> int:
        """A cheap call whose answer says the agent is alive."""
        return os.getpid()

    def close(self) -> Answer:
        """Close the envs (their worker processes exit); the answer holds the first env's error from closing, if any."""
        with self.lock:
            envs, self.envs = self.envs, None
        try:
            if envs is not None:
                envs.close()
        except BaseException as error:
            return Answer(errors=[self._record(error, "close")])
        return Answer()


def _prepare_forkserver() -> None:
    # The forkserver would import this process's __main__, Ray's worker script, and Ray with it.
    multiprocessing.get_context("forkserver").set_forkserver_preload([run_worker.__module__])


def _current_observations(envs: AsyncVectorEnv | SyncVectorEnv) -> Any:
    """The batch of the envs' last observations."""
    if isinstance(envs, SyncVectorEnv):
        space = envs._spaces.single_observation_space
        return concatenate(space, envs._env_obs, create_empty_array(space, envs.num_envs))
    return envs._observations.read()


def _node_id() -> str:
    import ray

    return str(ray.get_runtime_context().get_node_id())


def _host_address() -> str:
    """This node's address as other nodes reach it (Ray's own view of it, else the hostname's)."""
    try:
        import ray

        return str(ray.util.get_node_ip_address())
    except Exception:
        return socket.gethostbyname(socket.gethostname())
