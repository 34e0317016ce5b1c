"""Short runs of the soak (``scripts/soak.py``): every row right, no hang, under kills, Ctrl-C storms and pool mode.

The long runs are the script's job (``python scripts/soak.py --seconds 600``); these few seconds per case catch a
pool that regressed badly.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import cloudpickle
import pytest


def load_soak() -> ModuleType:
    """``scripts/soak.py`` as a module (scripts/ is not a package), whose env travels to the workers by value."""
    path = Path(__file__).resolve().parent.parent / "scripts" / "soak.py"
    spec = importlib.util.spec_from_file_location("soak_script", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    cloudpickle.register_pickle_by_value(module)  # forkserver and spawn workers could not import it by name
    return module


soak = load_soak()


@pytest.mark.timeout(90)
@pytest.mark.parametrize("context", ["forkserver", "fork"])
@pytest.mark.parametrize(
    ("storm", "batch_size"),
    [
        pytest.param({"kill_every": 0.0, "sigint_every": 0.0, "slow": 0.02}, None, id="slow_envs"),
        pytest.param({"kill_every": 0.4, "sigint_every": 0.0}, None, id="kills"),
        pytest.param({"kill_every": 0.4, "sigint_every": 0.0}, 2, id="pool_mode_kills"),
        pytest.param({"kill_every": 0.0, "sigint_every": 0.1}, None, id="ctrl_c_step_wait"),
        pytest.param(
            {"kill_every": 0.0, "sigint_every": 0.1, "recovery": "step"},
            None,
            id="ctrl_c_step",
        ),
        pytest.param({"kill_every": 0.0, "sigint_every": 0.1}, 2, id="pool_mode_ctrl_c"),
        pytest.param({"kill_every": 0.4, "sigint_every": 0.1, "slow": 0.02}, None, id="everything"),
        pytest.param({"kill_every": 0.4, "sigint_every": 0.1, "slow": 0.02}, 2, id="pool_mode_everything"),
    ],
)
def test_a_short_soak_returns_only_right_rows_and_never_hangs(
    context: str, storm: dict[str, object], batch_size: int | None
) -> None:
    config = soak.SoakConfig(
        # A wait of 15 s is a hang: well past a restart's ~0.1 s, with room for a loaded CI machine (once, in the
        # full suite, a recv after the storms outlasted 5 s; 120 short soaks alone never came near it).
        seconds=3.0,
        context=context,
        batch_size=batch_size,
        hang_seconds=15.0,
        seed=0,
        verbose=False,
        **storm,
    )
    result = soak.run_soak(config)
    assert result.steps > 0, result.summary()
    if config.kill_every:
        # A kill in the run's last moments is never noticed by a call: only the restarts made must show in rows.
        assert result.kills > 0 and result.restarted_rows >= result.restarts, result.summary()
    if config.sigint_every:
        assert result.interrupts > 0, result.summary()
    assert result.ok(), f"{result.summary()}; first problems: {result.problems[:3]}"


def test_the_checker_catches_wrong_rows() -> None:
    """The soak's row check fails a stale row, another env's row, a lost flag and infos a step behind."""
    track = soak.EnvTrack(episode=7, count=2, ended=False, length=40)
    assert soak.check_row(track, 1, ([1, 7, 3, 5], 5.0, False, False, {"count": 3}), 5) is None
    assert soak.check_row(track, 1, ([1, 7, 3, 5], 5.0, False, False, {"count": 3}), 5) is not None  # a repeat
    track = soak.EnvTrack(episode=7, count=2, ended=False, length=40)
    assert soak.check_row(track, 1, ([2, 7, 3, 5], 5.0, False, False, {"count": 3}), 5) is not None  # env 2's row
    track = soak.EnvTrack(episode=7, count=2, ended=False, length=40)
    assert soak.check_row(track, 1, ([1, 9, 0, 0], 0.0, False, True, {}), 5) is not None  # restart, unflagged
    track = soak.EnvTrack(episode=7, count=2, ended=False, length=40)
    flagged = {"worker_restarted": True}
    assert soak.check_row(track, 1, ([1, 9, 0, 0], 0.0, False, True, flagged), 5) is None
    track = soak.EnvTrack(episode=7, count=2, ended=False, length=40)
    assert soak.check_row(track, 1, ([1, 7, 3, 5], 5.0, False, False, {}), 5) is not None  # info missing
    track = soak.EnvTrack(episode=7, count=2, ended=False, length=40)
    assert soak.check_row(track, 1, ([1, 7, 3, 4], 4.0, False, False, {"count": 3}), 5) is not None  # wrong action
