import compileall
import os
import signal
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

import vecspaces

# FAST=1 keeps property tests short while developing; CI uses the default profile.
settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fast", max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("fast" if os.environ.get("FAST") else "ci")

# The run starts many processes that import vecspaces (spawn and forkserver workers, Ray agents, subprocess tests).
# Where Python writes no bytecode (PYTHONDONTWRITEBYTECODE, as on this project's machines) each of them would compile
# the package from source, ~0.2 s apiece: compile it once, as an installed package is.
compileall.compile_dir(os.path.dirname(vecspaces.__file__), quiet=2)

# A run started in the background (`python -m pytest &`) inherits SIGINT ignored, and the Ctrl-C tests raise
# SIGINT: they need Python's own handler, as a run in a terminal has.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# -- Ray ---------------------------------------------------------------------------------------------------------
# One local Ray for the whole run, started by the first test that needs it. Tests that use it run last: once Ray is
# up this process runs Ray's threads, and other tests fork it.


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # Ray is in the test extra; only .ci/run's runs against older Gymnasium leave it out.
    ray = pytest.importorskip("ray", reason="Ray is not installed (the test extra installs it)")

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Then the 2-node cluster's tests, which stop the shared Ray to connect to their own.
    def order(item: pytest.Item) -> int:
        fixtures = getattr(item, "fixturenames", ())
        return 2 if "two_nodes" in fixtures else 1 if "ray_cluster" in fixtures else 0

    items.sort(key=order)
