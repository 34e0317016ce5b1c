"""Scale out on Ray: :class:`RayVectorEnv`, one vector env whose envs run on the nodes of a Ray cluster.

Importing this package needs Ray (``pip install "vecspaces[ray]"``); ``import vecspaces`` never imports it.

Two tiers::

      driver (RayVectorEnv)                          agent k: a Ray actor on some node
      ---------------------                          ---------------------------------
      checks the actions, splits them by agent       a local AsyncVectorEnv (forkserver) over envs lo..hi
      send (STEP, actions[lo:hi]) ------socket----->  envs.step(actions)  -> workers write shared memory,
                                   (or Ray call)        the agent steps one CPU's share of the envs itself
                                                      sends (observations, rewards, flags, infos) back
                                                        (on the driver's node, observations in shared memory)
      waits on every agent's socket <------------
      joins the slices into one batch (same layout as AsyncVectorEnv's), infos numbered in the whole env

Ray creates, places and supervises the agents and carries their control calls (start, open the socket,
worker_info, close). With ``transport="socket"`` (the default) each command then travels over one
``multiprocessing.connection`` connection per agent, which the agent opens on a free port with a random
authkey that only the driver learns (through Ray); with ``transport="ray"`` each command is an actor call.
Agents are created with ``max_restarts=0`` and ``max_task_retries=0``: Ray would otherwise replay an in-flight
step on a restarted actor, silently.

Failure semantics (as ``AsyncVectorEnv``'s, an agent in the place of a worker):

- An env that raises: the original exception type, its remote traceback chained, "raised by env i during
  step" and "on agent k, node X" in notes; the vector env stays usable.
- An agent that dies (its process killed, its node lost): noticed as soon as its socket closes (or Ray reports
  the actor dead); :class:`~vecspaces.error.WorkerDiedError` names the agent, its envs, its node and what was
  seen. Without ``restart_agents`` the vector env is then broken; with it, a replacement is started on the same
  node if it is alive (elsewhere if not), its envs reset, and reported at their next step as truncated with
  ``info["worker_restarted"]``; a call in progress is redone by the replacement.
- Every wait accepts a timeout (:class:`~vecspaces.error.WaitTimeoutError`, the call stays pending) and blocks
  in 50 ms slices, so Ctrl-C ends it promptly; an interrupted call is collected and dropped by the next call.
- ``close()`` closes the agents' envs (1 s by default), kills the actors, and shuts Ray down if it started it.
"""

from vecspaces.vector.ray.ray_vector_env import RayVectorEnv

__all__ = ["RayVectorEnv"]
