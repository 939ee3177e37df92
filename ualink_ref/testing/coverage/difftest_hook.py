"""Sampling a difftest run (specs/coverage.md "Sampling a difftest run").

:func:`sample_difftest_case` samples one difftest input: the model's verdict (an
error class, or accepted) and — through the codec's own mapping onto a golden-vector
kind (``Codec.vector``, the one reproducers use) — the same field, error and cross
bins a vector case of that kind hits. :func:`observed` wraps a target (a callable
or a :class:`~ualink_ref.testing.difftest.api.LineTarget`) so that every input
difftest sends it is sampled first; nothing in difftest changes::

    from ualink_ref.testing.coverage import Coverage, coverage_model
    from ualink_ref.testing.coverage.difftest_hook import observed
    from ualink_ref.testing.difftest.api import difftest
    from ualink_ref.testing.difftest.layers import CODECS

    cov = Coverage(coverage_model())
    result = difftest("dl", observed(my_decoder, cov, CODECS["dl"]), max_cases=200)
    print(cov.report(select="field:dl_").summary())

Inputs tried while shrinking are sampled too (they were sent to the target).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ualink_ref.testing.coverage.cases import error, sample_case
from ualink_ref.testing.coverage.model import Coverage
from ualink_ref.testing.coverage.wire import sample_pseudo_header
from ualink_ref.testing.difftest.api import LineTarget, RestartableTarget, model_outcome
from ualink_ref.testing.difftest.layers import Case, Codec
from ualink_ref.testing.vectors import load_source


def sample_difftest_input(cov: Coverage, codec: Codec, data: Any) -> None:
    """Sample one input value of ``codec`` (what difftest sends a target)."""
    verdict = model_outcome(codec, data).verdict
    error(cov, verdict)
    try:
        vector = codec.vector(data)
    except Exception:  # a mapping that cannot take this input: sample the verdict only
        vector = None
    if vector is None:
        if codec.layer == "capture" and isinstance(data, bytes | bytearray):
            sample_pseudo_header(cov, bytes(data))
        cov.samples += 1
        return
    kind, inputs = vector
    try:
        expected = load_source(codec.layer).compute(kind, inputs)
    except Exception:  # the model refuses the input: its verdict was sampled above
        cov.samples += 1
        return
    sample_case(cov, codec.layer, {"kind": kind, "inputs": inputs, "expected": expected})


def sample_difftest_case(cov: Coverage, codec: Codec, case: Case) -> None:
    """Sample one difftest :class:`~ualink_ref.testing.difftest.layers.Case`."""
    sample_difftest_input(cov, codec, case.data)


class _ObservedLineTarget:
    """A line target that samples every request before passing it on."""

    def __init__(self, target: LineTarget, cov: Coverage, codec: Codec) -> None:
        self._target, self._cov, self._codec = target, cov, codec

    def exchange(self, line: str) -> str:
        """Sample the request carried by ``line``, then exchange it with the target."""
        sample_difftest_input(self._cov, self._codec, self._codec.parse_request(line))
        return self._target.exchange(line)


class _ObservedProcessTarget(_ObservedLineTarget):
    """An observed :class:`~ualink_ref.testing.difftest.api.RestartableTarget`: it stays one,
    so difftest still counts what it answered, restarts it and bounds its restarts."""

    def __init__(self, target: RestartableTarget, cov: Coverage, codec: Codec) -> None:
        super().__init__(target, cov, codec)
        self._process = target

    @property
    def answered(self) -> int:
        """Lines the wrapped target's current process has answered."""
        return self._process.answered

    @property
    def restarts(self) -> int:
        """Processes the wrapped target started after the first."""
        return self._process.restarts

    def restart(self) -> None:
        """Restart the wrapped target."""
        self._process.restart()


def observed(target: Callable[[Any], Any] | LineTarget, cov: Coverage,
             codec: Codec) -> Callable[[Any], Any] | LineTarget:
    """``target``, sampling into ``cov`` every input difftest gives it (a restartable
    target stays restartable)."""
    if isinstance(target, RestartableTarget):
        return _ObservedProcessTarget(target, cov, codec)
    if isinstance(target, LineTarget):
        return _ObservedLineTarget(target, cov, codec)
    function = target

    def run(data: Any) -> Any:
        sample_difftest_input(cov, codec, data)
        return function(data)

    return run


__all__ = ["observed", "sample_difftest_case", "sample_difftest_input"]
