"""Copies of an AsyncVectorEnv never stop its workers: a forked child's copy is disowned, other copies are refused.

Each fork case runs in a fresh interpreter: the child must end as programs end (atexit handlers, finalizers,
``__del__`` at shutdown), which a test process cannot do to itself. The parent then steps the pool and checks that
every worker is alive and the observations are those of a SyncVectorEnv given the same seeds and actions.
"""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

from vecspaces.envs import TinyEnv
from vecspaces.error import InvalidTypeError
from vecspaces.vector import AsyncVectorEnv

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() does not exist on this platform"),
]

PARENT = """
import gc, multiprocessing, os, sys
import numpy as np
from vecspaces.envs import TinyEnv
from vecspaces.error import ClosedEnvironmentError
from vecspaces.vector import AsyncVectorEnv, SyncVectorEnv

envs = AsyncVectorEnv([TinyEnv] * 4, num_workers=2, context={context!r})
reference = SyncVectorEnv([TinyEnv] * 4)
for env in (envs, reference):
    env.reset(seed=3)
actions = np.array([0, 1, 1, 0])

def child():
{child}

pid = os.fork()
if pid == 0:
    child()
    sys.exit(0)  # the way a program ends: atexit handlers and finalizers run
_, status = os.waitpid(pid, 0)
print("child exit status", os.waitstatus_to_exitcode(status))
for _ in range(3):
    observations = envs.step(actions)[0]
    expected = reference.step(actions)[0]
print("workers alive", all(info["alive"] for info in envs.worker_info()))
print("same observations", bool(np.array_equal(observations, expected)))
envs.close()
print("closed", envs.closed)
"""

CHILDREN = {
    "ends holding the env": "    pass",
    "drops the env": "    global envs\n    del envs\n    gc.collect()",
    "closes the env": "    envs.close()\n    assert envs.closed",
    "leaves a with block": "    with envs:\n        pass",
    "starts and joins a process": (
        "    process = multiprocessing.get_context('fork').Process(target=print, args=('grandchild',))\n"
        "    process.start()\n    process.join()"
    ),
}


def run_parent(context: str, child: str) -> str:
    script = PARENT.format(context=context, child=child)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=100)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("context", ["fork", "spawn"])
@pytest.mark.parametrize("child", sorted(CHILDREN))
def test_a_forked_child_leaves_the_parents_workers_running(context: str, child: str) -> None:
    output = run_parent(context, CHILDREN[child])
    assert "child exit status 0" in output
    assert "workers alive True" in output
    assert "same observations True" in output
    assert "closed True" in output


@pytest.mark.parametrize(
    "call",
    ["envs.step(actions)", "envs.reset()", "envs.call('render')", "envs.send(actions)", "envs.worker_info()"],
)
def test_a_forked_child_cannot_use_the_parents_env(call: str) -> None:
    child = textwrap.indent(
        textwrap.dedent(f"""
        try:
            {call}
        except ClosedEnvironmentError as error:
            message = str(error)
            assert "inherited by fork() from process" in message and str(os.getppid()) in message, message
            assert "create a new AsyncVectorEnv in this one" in message, message
        else:
            os._exit(3)
        """),
        "    ",
    )
    output = run_parent("fork", child)
    assert "child exit status 0" in output
    assert "workers alive True" in output
    assert "same observations True" in output


@pytest.mark.parametrize("make_copy", [pickle.dumps, copy.copy, copy.deepcopy], ids=["pickle", "copy", "deepcopy"])
def test_pickling_or_copying_the_pool_is_refused_and_leaves_it_working(make_copy: Any) -> None:
    # A shallow copy shared the workers: once garbage collected, its __del__ closed the original's pool.
    with AsyncVectorEnv([TinyEnv] * 2, num_workers=1) as envs:
        envs.reset(seed=0)
        with pytest.raises(InvalidTypeError, match=r"cannot be pickled or copied.*build a new vector env") as caught:
            make_copy(envs)
        assert isinstance(caught.value, TypeError)
        assert envs.step(np.array([0, 1]))[1].tolist() == [1.0, 1.0]
