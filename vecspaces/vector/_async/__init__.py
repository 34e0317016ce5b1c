"""The worker pool behind :class:`~vecspaces.vector.AsyncVectorEnv`.

Data flow of one ``step``::

      main process                                   worker w (envs lo..hi)
      ------------                                   ----------------------
      write actions -------> [shared: actions]
      choose the observation buffer, commands[w] = STEP
      command_ready[w].release() ------------------>  wakes (polls while commands come fast, else blocks)
                                                      for each env: read its action,
                                                        env.step(action) (autoreset as the mode says),
                                    [shared: obs] <--   write obs, reward, terminated, truncated,
                                [shared: control] <--   and an info of plain numbers
                                                      a small reply (infos of other values, variable leaves,
                                                        errors) goes first: pipe.send_bytes(reply)
                                                      has_reply[w] = bool(reply), finished[w] = 1
      waits on completions <-----------------------   completions.release()
      (polls, then blocks in short slices,            then a large reply: pipe.send_bytes(reply)
       checking the busy workers are alive)
      reads the replies of workers with has_reply
      returns [shared: obs]: views (copy=False), or lent from a spare buffer / copied (copy=True), and infos
      batched from [shared: control] and the replies

What each worker is doing, as the main process sees it (``inflight``)::

    IDLE --dispatch--> RUNNING --finished flag taken, reply read--> DONE --results taken by the call--> IDLE
                          +--its process died--> restarted, command redone: RUNNING (or the pool broken)

With ``copy=True``, observation arrays are not copied: each step writes one of a few spare observation buffers
and lends it to the caller until the caller drops it (see ``vecspaces.vector._async.lending``).

Everything of fixed size travels through shared memory, laid out once (see ``vecspaces.vector.utils``):
observations, actions, rewards, flags and infos of plain numbers (``info_slots``). Only what has no fixed size
is pickled: other infos, the variable-size leaves of observations and actions (Sequence, Graph, custom spaces
without a layout), call results and errors, and the arguments of reset, call and set_attr. With
``shared_memory=False`` whole observations travel through the pipe instead.

The pieces, each with one job: ``options`` checks the constructor's options; ``startup`` builds the pool from
them; ``shared`` lays out the shared memory; ``pool`` starts, commands, waits for and restarts the worker
processes (``worker`` is their side, ``env_slice`` steps a slice of envs there or in the main process,
``writers`` write its observations into shared memory; ``processes`` tells how one ended and stops them), with
what each worker is doing in ``inflight``;
``gate`` decides which call may run now (``forks`` disowns the pools a forked child inherits); ``interrupts``
holds signals back while the main process's bookkeeping and the workers disagree; ``calls`` runs the
Gymnasium-style call in progress; ``actions`` writes a batch of actions;
``observations`` reads the batch of observations and owns ``copy`` (``lending`` lends spare buffers, ``copies``
copies); ``info_slots`` carries infos of plain numbers in shared memory; ``pool_mode`` holds the state of
``send``/``recv``; ``waiting`` polls or blocks; ``affinity`` pins the workers while that pays; ``busy_threads``
warns when other threads of the main process burn a core while it waits; ``pacing`` feeds those three.
``vecspaces.vector.async_vector_env`` is the Gymnasium-facing facade over them.

Failure semantics:

- An exception in a sub-env comes back with its remote traceback chained (``raise ... from``) and the env index
  in a note; the worker survives and the pool stays usable.
- A worker that dies is noticed within a wait slice (0.05 s): the call raises :class:`WorkerDiedError` naming
  the envs, the exit code or signal and the command. The pool is then broken (every call but ``close`` raises
  the same error), unless ``restart_workers=True``, which restarts the worker, resets its envs and reports them
  as truncated with ``info["worker_restarted"]``. A replacement that fails too is replaced again, up to
  ``restart_attempts`` times in a row; then the pool is broken, the other workers left running until
  ``close()``.
- A Ctrl-C (or any signal handler that raises) is held back while the main process's bookkeeping and the
  workers disagree, and raised at the end of the call or between two slices of a wait. A call it interrupts
  while pending is abandoned: ``*_wait`` still collects it, any other call collects and drops it first.
- Every wait accepts a timeout. A :class:`~vecspaces.error.WaitTimeoutError` (a builtin ``TimeoutError`` and a
  ``multiprocessing.TimeoutError``, as Gymnasium raises) leaves the call pending: call the same ``*_wait`` (or
  ``recv``) again to collect the late results; other calls are refused until then; ``close()`` always works.
- ``close()`` is idempotent and escalates: close command, join with a timeout, terminate, kill. Workers ignore
  SIGINT, exit by themselves if the main process dies, and are terminated at interpreter exit.
"""
