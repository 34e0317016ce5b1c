"""Workers whose main process was killed exit by themselves, each on its own, not one after the other."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from .test_failures import SCRIPT_PREAMBLE, assert_gone

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(params=["fork", "forkserver", "spawn"])
def context(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.timeout(60)
def test_orphaned_workers_exit_even_while_another_orphan_is_stopped(context: str) -> None:
    # Under fork each worker started later holds a copy of the main process's end of every earlier worker's
    # parent-death pipe: if the earlier ones waited for that pipe alone, a stopped later worker (or one busy
    # in a long step) would keep them alive, and they would leave one at a time behind it.
    body = f"""
    if __name__ == "__main__":
        envs = AsyncVectorEnv([CountdownEnv] * 6, context={context!r}, num_workers=6)
        envs.reset(seed=0)
        print(*[w["pid"] for w in envs.worker_info()], flush=True)
        time.sleep(60)
    """
    code = SCRIPT_PREAMBLE.format(root=ROOT) + textwrap.dedent(body)
    # Not subprocess.run: the workers share the script's stdout, and the stopped one would keep it open.
    script = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert script.stdout is not None
    *others, stopped = [int(pid) for pid in script.stdout.readline().split()]
    os.kill(stopped, signal.SIGSTOP)
    script.kill()
    script.wait()
    try:
        assert_gone(others)
    finally:
        os.kill(stopped, signal.SIGKILL)
        script.stdout.close()
    assert_gone([stopped])
