"""Checking someone else's implementation against the model (``specs/difftest.md``).

* :func:`difftest` — differential fuzzing of one codec, with a Python callable
  or a line-protocol target (:class:`SubprocessTarget`);
* :func:`write_reproducer` / :func:`replay` — the first disagreement as a
  golden-vector file, and its replay;
* (``ualink_ref.testing.export`` — golden vectors as ``$readmemh`` / CSV files — lives
  beside the vectors: it needs neither Hypothesis nor a target.)

Needs the ``test`` extra (Hypothesis) to run a hunt; importing this package
imports neither Hypothesis nor numpy.
"""

from __future__ import annotations

from ualink_ref.testing.difftest.api import Coverage, Failure, LineTarget, Result, difftest
from ualink_ref.testing.difftest.layers import CODECS, Case, Codec
from ualink_ref.testing.difftest.protocol import Difference, Outcome
from ualink_ref.testing.difftest.reproducer import replay, write_reproducer
from ualink_ref.testing.difftest.subprocess_target import SubprocessTarget

__all__ = ["CODECS", "Case", "Codec", "Coverage", "Difference", "Failure", "LineTarget",
           "Outcome", "Result", "SubprocessTarget", "difftest", "replay", "write_reproducer"]
