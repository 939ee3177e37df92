"""Functional coverage of golden vectors, difftest runs and cocotb tests (specs/coverage.md).

A small pure-Python cover-point model (:mod:`.model`) declares a bin for every
numbered rule in specs/ (:mod:`.rules`), every value class of every field of the
declared formats (:mod:`.fields`), every error class and the crosses verification
plans ask for (:mod:`.points`). Samplers read vector cases (:mod:`.cases`,
:mod:`.directory`), difftest inputs (:mod:`.difftest_hook`) or a testbench's
values (:mod:`.cocotb_adapter`, which mirrors the same points into
cocotb-coverage when it is installed).
"""

from ualink_ref.testing.coverage.model import Coverage, CoverageModel, CoverageReport, CoverPoint
from ualink_ref.testing.coverage.points import coverage_model

#: Default closure threshold of ``ualink-ref vectors coverage``, in percent.
DEFAULT_THRESHOLD = 100.0

__all__ = [
           "DEFAULT_THRESHOLD",
           "CoverPoint",
           "Coverage",
           "CoverageModel",
           "CoverageReport",
           "coverage_model",
]
