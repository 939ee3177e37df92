"""Shared test configuration: Hypothesis profiles and seeded randomness."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# `dev` is quick for the edit-test loop; `ci` runs more examples, derandomized
# so that a CI failure reproduces exactly. Select with HYPOTHESIS_PROFILE.
settings.register_profile("dev", max_examples=30, deadline=None)
settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
