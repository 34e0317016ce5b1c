import os

from hypothesis import HealthCheck, settings

# FAST=1 keeps property tests short while developing; CI uses the default profile.
settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fast", max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("fast" if os.environ.get("FAST") else "ci")
