"""Differential testing of another implementation against the model.

:func:`difftest` draws inputs for one codec (``ualink_ref.testing.difftest.layers``),
asks both the model and the implementation under test, and compares verdict
(accept, or which error class) and fields. The first disagreement is shrunk
by Hypothesis to a minimal input and returned as a :class:`Failure` with its
field-level differences; :func:`ualink_ref.testing.difftest.reproducer.write_reproducer`
turns it into a golden-vector file.

The implementation is either a Python callable (input value in: ``bytes`` or,
for encoders, a ``dict``; ``bytes`` / ``dict`` out, or it raises) or a
:class:`LineTarget` (anything with ``exchange(line) -> line``, such as
:class:`~ualink_ref.testing.difftest.subprocess_target.SubprocessTarget`) speaking the
line protocol of ``specs/difftest.md``.

Runs are seeded; the budget is a case count and optionally a time limit
(the time limit only stops generating: a disagreement found is always shrunk).
Wall-clock time is used here, in the tool, never in protocol code.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ualink_ref.testing.difftest.layers import CODECS, Case, Codec
from ualink_ref.testing.difftest.protocol import (
    Difference,
    Outcome,
    compare,
    outcome_of,
    parse_response,
)


@runtime_checkable
class LineTarget(Protocol):
    """An implementation reached through the line protocol."""

    def exchange(self, line: str) -> str:
        """Send one request line, return its response line."""


@dataclass
class Coverage:
    """What a run exercised: cases by input source and by the model's verdict."""

    cases: int = 0
    by_source: Counter[str] = field(default_factory=Counter)
    by_verdict: Counter[str] = field(default_factory=Counter)

    def lines(self) -> list[str]:
        """Human-readable summary lines."""
        src = ", ".join(f"{k} {v}" for k, v in sorted(self.by_source.items()))
        ver = ", ".join(f"{k} {v}" for k, v in sorted(self.by_verdict.items()))
        return [f"cases: {self.cases}", f"inputs: {src}", f"model verdicts: {ver}"]


@dataclass(frozen=True)
class Failure:
    """The (shrunk) first disagreement: input, both outcomes, the differing fields."""

    case: Case
    request: str
    model: Outcome
    target: Outcome
    differences: tuple[Difference, ...]

    def describe(self) -> str:
        """A multi-line report naming every differing field."""
        shown = self.request if len(self.request) <= 100 else self.request[:97] + "..."
        head = [f"input ({self.case.source}): {shown}",
                f"model:  {self.model.line()[:100]}", f"target: {self.target.line()[:100]}"]
        return "\n".join(head + [f"  differs: {d}" for d in self.differences])


@dataclass
class Result:
    """Outcome of :func:`difftest`."""

    codec: str
    seed: int
    coverage: Coverage
    failure: Failure | None = None
    stopped_by_time: bool = False

    @property
    def ok(self) -> bool:
        """True when no disagreement was found."""
        return self.failure is None

    def summary(self) -> str:
        """One block of text: verdict, budget reached, coverage."""
        state = "DISAGREEMENT" if self.failure else "agree"
        lines = [f"difftest {self.codec} seed={self.seed}: {state}"
                 + (" (time budget reached)" if self.stopped_by_time else "")]
        lines += ["  " + line for line in self.coverage.lines()]
        if self.failure:
            lines += ["  " + line for line in self.failure.describe().splitlines()]
        return "\n".join(lines)


class _Disagreement(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__("\n".join(str(d) for d in failure.differences))
        self.failure = failure


def model_outcome(codec: Codec, data: Any) -> Outcome:
    """The model's outcome for one input; an error's detail names its field when it has one."""
    try:
        result = codec.reference(data)
    except Exception as exc:
        where = getattr(exc, "field", None)
        return Outcome(type(exc).__name__, detail=str(where) if where else "")
    return outcome_of(lambda _: result, None)


def target_runner(codec: Codec, target: Callable[[Any], Any] | LineTarget
                  ) -> Callable[[Any], Outcome]:
    """A function giving the target's :class:`Outcome` for one input value."""
    if isinstance(target, LineTarget):
        line_target = target
        return lambda data: parse_response(line_target.exchange(codec.request_line(data)))
    function = target
    return lambda data: outcome_of(function, data)


def check_one(codec: Codec, run: Callable[[Any], Outcome],
              case: Case) -> tuple[Outcome, Failure | None]:
    """Compare model and target on one case: the model's outcome, and the
    :class:`Failure` if they disagree."""
    model = model_outcome(codec, case.data)
    got = run(case.data)
    diffs = compare(model, got, codec.locate)
    if not diffs:
        return model, None
    return model, Failure(case, codec.request_line(case.data), model, got, tuple(diffs))


def difftest(codec: str | Codec, target: Callable[[Any], Any] | LineTarget, *, seed: int = 0,
             max_cases: int = 200, max_seconds: float | None = None,
             shrink: bool = True, clock: Callable[[], float] = time.monotonic) -> Result:
    """Hunt for a disagreement between the model and ``target`` on one codec.

    ``max_cases`` bounds the inputs tried; ``max_seconds`` (optional) stops
    generating new ones after that long. The first disagreement is shrunk
    (unless ``shrink`` is false) and returned in :attr:`Result.failure`.
    """
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed

    spec = CODECS[codec] if isinstance(codec, str) else codec
    run = target_runner(spec, target)
    result = Result(spec.name, seed, Coverage())
    start = clock()
    found = False

    @hseed(seed)
    @settings(max_examples=max_cases, database=None, deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
              phases=[Phase.generate, Phase.shrink] if shrink else [Phase.generate],
              print_blob=False, verbosity=Verbosity.quiet)
    @given(spec.strategy())
    def hunt(case: Case) -> None:
        nonlocal found
        if not found and max_seconds is not None and clock() - start > max_seconds:
            result.stopped_by_time = True
            return
        model, failure = check_one(spec, run, case)
        if not found:
            result.coverage.cases += 1
            result.coverage.by_source[case.source] += 1
            result.coverage.by_verdict[model.verdict] += 1
        if failure is not None:
            found = True
            raise _Disagreement(failure)

    try:
        hunt()
    except _Disagreement as exc:
        result.failure = exc.failure
    return result


__all__ = ["Coverage", "Failure", "LineTarget", "Result", "check_one", "difftest",
           "model_outcome", "target_runner"]
