"""Checking someone else's implementation against the model (``specs/difftest.md``).

* :func:`difftest` — differential fuzzing of one codec, with a Python callable
  or a line-protocol target (:class:`SubprocessTarget`); a target that crashes,
  hangs or breaks the protocol is a :class:`Fault` of the :class:`Failure`;
* :data:`LENGTH_RULES` — the input lengths each codec accepts;
* :func:`write_reproducer` / :func:`replay_results` — the first failure as a
  golden-vector file, and its replay;
* (``ualink_ref.testing.export`` — golden vectors as ``$readmemh`` / CSV files — lives
  beside the vectors: it needs neither Hypothesis nor a target.)

Imports Hypothesis (a dependency of the package) only when a hunt runs.
"""

from __future__ import annotations

from ualink_ref.testing.difftest.api import (
    Coverage,
    Failure,
    Fault,
    LineTarget,
    Result,
    difftest,
)
from ualink_ref.testing.difftest.layers import CODECS, Case, Codec
from ualink_ref.testing.difftest.lengths import LENGTH_RULES, LengthRule
from ualink_ref.testing.difftest.protocol import Difference, Outcome
from ualink_ref.testing.difftest.reproducer import (
    ReplayResult,
    replay,
    replay_results,
    write_reproducer,
)
from ualink_ref.testing.difftest.subprocess_target import SubprocessTarget

__all__ = ["CODECS", "LENGTH_RULES", "Case", "Codec", "Coverage", "Difference", "Failure",
           "Fault", "LengthRule", "LineTarget", "Outcome", "ReplayResult", "Result",
           "SubprocessTarget", "difftest", "replay", "replay_results", "write_reproducer"]
