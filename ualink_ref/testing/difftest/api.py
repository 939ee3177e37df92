"""Differential testing of another implementation against the model.

:func:`difftest` draws inputs for one codec (``ualink_ref.testing.difftest.layers``),
asks both the model and the implementation under test, and compares verdict
(accept, or which error class) and fields. The first failure is shrunk by
Hypothesis to a minimal input and returned as a :class:`Failure`: a
disagreement with its field-level differences, or a :class:`Fault` — the
target crashed, hung or broke the line protocol on that input
(``specs/difftest.md``, "Target faults");
:func:`ualink_ref.testing.difftest.reproducer.write_reproducer` turns it into a
golden-vector file.

The implementation is either a Python callable (input value in: ``bytes`` or,
for encoders, a ``dict``; ``bytes`` / ``dict`` out, or it raises) or a
:class:`LineTarget` (anything with ``exchange(line) -> line``, such as
:class:`~ualink_ref.testing.difftest.subprocess_target.SubprocessTarget`) speaking the
line protocol of ``specs/difftest.md``.

Runs are seeded; the budget is a case count and optionally a time limit
(the time limit only stops generating: a failure found is always shrunk).
Wall-clock time is used here, in the tool, never in protocol code.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from ualink_ref.errors import ConfigError, TargetProtocolError, TargetTimeout, UALinkError
from ualink_ref.testing.difftest.layers import CODECS, Case, Codec
from ualink_ref.testing.difftest.lengths import LENGTH_RULES, length_error
from ualink_ref.testing.difftest.protocol import (
    BYTES,
    Difference,
    Outcome,
    compare,
    outcome_of,
    parse_response,
)

#: ``Failure.kind`` of a disagreement (a fault's kind is its error class name).
DISAGREEMENT = "disagreement"
#: Restarts of a target allowed after its first fault, while confirming and shrinking it
#: (project choice: a C harness restarts in milliseconds, a Python one in about a second,
#: so 50 bounds a shrink to a minute or so; the smallest failing input so far is reported).
MAX_RESTARTS = 50


@runtime_checkable
class LineTarget(Protocol):
    """An implementation reached through the line protocol."""

    def exchange(self, line: str) -> str:
        """Send one request line, return its response line."""


@runtime_checkable
class RestartableTarget(LineTarget, Protocol):
    """A line target that is a process: it can be restarted and counts what it answered
    (:class:`~ualink_ref.testing.difftest.subprocess_target.SubprocessTarget`)."""

    answered: int  # lines the current process has answered
    restarts: int  # processes started after the first

    def restart(self) -> None:
        """Discard the current process; the next exchange starts a fresh one."""


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
class Fault:
    """A target that gave no valid answer to one input: ``error`` is the
    :class:`~ualink_ref.errors.TargetCrashed`, :class:`~ualink_ref.errors.TargetTimeout`
    or :class:`~ualink_ref.errors.TargetProtocolError` (``specs/difftest.md``,
    "Target faults").

    ``answered_before`` counts the lines the target process had answered
    before this input (``None`` for a target that is not a process). ``recurs``
    says whether the input alone, as the first line of a freshly started
    target, gives the same fault (only then is it shrunk); ``retry`` says what
    that fresh target did instead when it did not. A hang is not retried
    (``recurs`` is ``None``): each try costs the whole timeout.
    """

    error: TargetProtocolError
    answered_before: int | None
    recurs: bool | None
    retry: str = ""

    @property
    def kind(self) -> str:
        """The error class name: ``TargetCrashed``, ``TargetTimeout`` or ``TargetProtocolError``."""
        return type(self.error).__name__

    def line(self) -> str:
        """``<ErrorClass>: <message>``."""
        return f"{self.kind}: {self.error}"

    def verdict_line(self) -> str:
        """Whether it recurs, in words."""
        if self.recurs is None:
            return "not retried or shrunk: each try of a hang costs the whole timeout"
        if self.recurs and self.answered_before == 0:
            return "it was the first line of a freshly started target: no earlier input is needed"
        if self.recurs:
            return "sent alone to a freshly started target: the same fault again"
        return (f"sent alone to a freshly started target: {self.retry}; the fault depends on "
                "the inputs before it (not shrunk)")


@dataclass(frozen=True)
class Failure:
    """The (shrunk) first failure: the input, the model's outcome, and either the
    target's outcome with the differing fields or the target's :class:`Fault`."""

    case: Case
    request: str
    model: Outcome
    target: Outcome | None
    differences: tuple[Difference, ...]
    fault: Fault | None = None
    note: str = ""

    @property
    def kind(self) -> str:
        """``disagreement``, or the fault's error class name."""
        return self.fault.kind if self.fault else DISAGREEMENT

    def target_line(self) -> str:
        """The target's response line, or its fault."""
        if self.fault is not None:
            return self.fault.line()
        assert self.target is not None
        return self.target.line()

    def describe(self) -> str:
        """A multi-line report: the input, both answers, every differing field or the fault."""
        shown = self.request if len(self.request) <= 100 else self.request[:97] + "..."
        size = "" if self.request.startswith("{") else f", {len(self.request) // 2} bytes"
        head = [f"input ({self.case.source}{size}): {shown}",
                f"model:  {self.model.line()[:100]}", f"target: {self.target_line()[:300]}"]
        tail = [f"  differs: {d}" for d in self.differences]
        if self.fault is not None:
            tail.append(f"  {self.fault.verdict_line()}")
        if self.note:
            tail.append(f"  note: {self.note}")
        return "\n".join(head + tail)


#: Summary headline of each kind of failure.
HEADLINES = {DISAGREEMENT: "DISAGREEMENT", "TargetCrashed": "TARGET CRASHED",
             "TargetTimeout": "TARGET HUNG", "TargetProtocolError": "TARGET PROTOCOL ERROR"}


@dataclass
class Result:
    """Outcome of :func:`difftest`."""

    codec: str
    seed: int
    coverage: Coverage
    failure: Failure | None = None
    stopped_by_time: bool = False
    restarts: int = 0  # target processes started after the first (each after a fault)

    @property
    def ok(self) -> bool:
        """True when no failure was found."""
        return self.failure is None

    def summary(self) -> str:
        """One block of text: verdict, budget reached, coverage."""
        state = HEADLINES.get(self.failure.kind, "TARGET FAULT") if self.failure else "agree"
        lines = [f"difftest {self.codec} seed={self.seed}: {state}"
                 + (" (time budget reached)" if self.stopped_by_time else "")]
        lines += ["  " + line for line in self.coverage.lines()]
        if self.restarts:
            lines.append(f"  target restarts: {self.restarts}")
        if self.failure:
            lines += ["  " + line for line in self.failure.describe().splitlines()]
        return "\n".join(lines)


class _Disagreement(Exception):
    """The failure Hypothesis shrinks (one class raised from one place: one origin)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.kind)
        self.failure = failure


class _Stop(BaseException):
    """Ends the hunt at once, without shrinking (Hypothesis lets a non-``Exception`` through):
    a fault that does not recur, a hang, or the restart budget used up."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.kind)
        self.failure = failure


def model_outcome(codec: Codec, data: Any) -> Outcome:
    """The model's outcome for one input; an error's detail names its field when it has one.

    A length the codec's rule rejects before the library function is asked
    (``lengths.LENGTH_RULES``, the PHY codecs) is answered with the rule's error.
    Only the ``UALinkError`` family (``ualink_ref/errors.py``) is a verdict: the decoders
    raise nothing else, so any other exception is a bug in the model and propagates,
    and no target can "agree" with it.
    """
    wrong = length_error(codec.name, data)
    if wrong is not None:
        return Outcome(wrong, detail=f"{len(data)} bytes; valid: {LENGTH_RULES[codec.name].valid}")
    try:
        result = codec.reference(data)
    except UALinkError as exc:  # the model's verdicts; any other exception is a model bug, raised
        where = getattr(exc, "field", None)
        return Outcome(type(exc).__name__, detail=str(where) if where else "")
    return outcome_of(lambda _: result, None)


class TargetDriver:
    """Asks one target about one codec's inputs: the request line out, the response
    parsed and checked for the codec's answer form; every way the target can fail
    to answer is a :class:`~ualink_ref.errors.TargetProtocolError`."""

    def __init__(self, codec: Codec, target: Callable[[Any], Any] | LineTarget) -> None:
        self.codec = codec
        self.target = target
        self.process = target if isinstance(target, RestartableTarget) else None
        rule = LENGTH_RULES.get(codec.name)
        self.answer = rule.answer if rule else None

    def outcome(self, data: Any) -> Outcome:
        """The target's outcome for one input (raises ``TargetProtocolError`` and its kin)."""
        if isinstance(self.target, LineTarget):
            line = self.target.exchange(self.codec.request_line(data))
            try:
                got = parse_response(line)
            except TargetProtocolError:
                self.restart()  # its stream may be out of step: start afresh
                raise
        else:
            got = outcome_of(self.target, data)
            line = got.line() if got.error is None else ""
        if got.error is None and self.answer is not None:
            is_bytes = set(got.value or {}) == {BYTES}
            if is_bytes != (self.answer == "hex"):
                want = "hex bytes" if self.answer == "hex" else "a JSON object of fields"
                raise TargetProtocolError(
                    f"codec {self.codec.name} answers {want}, got "
                    f"{'hex' if is_bytes else 'a JSON object'}", line)
        return got

    def answered(self) -> int | None:
        """Lines the current target process has answered (``None``: not a process)."""
        return self.process.answered if self.process is not None else None

    def restarts(self) -> int:
        """Processes started after the first (0 for a target that is not a process)."""
        return self.process.restarts if self.process is not None else 0

    def restart(self) -> None:
        """Start the target afresh before its next input (nothing to do for a callable)."""
        if self.process is not None:
            self.process.restart()


def target_runner(codec: Codec, target: Callable[[Any], Any] | LineTarget
                  ) -> Callable[[Any], Outcome]:
    """A function giving the target's :class:`Outcome` for one input value
    (a target fault raises its ``TargetProtocolError``)."""
    return TargetDriver(codec, target).outcome


def check_one(codec: Codec, run: Callable[[Any], Outcome],
              case: Case) -> tuple[Outcome, Failure | None]:
    """Compare model and target on one case: the model's outcome, and the
    :class:`Failure` if they disagree (a target fault propagates)."""
    model = model_outcome(codec, case.data)
    got = run(case.data)
    diffs = compare(model, got, codec.locate)
    if not diffs:
        return model, None
    return model, Failure(case, codec.request_line(case.data), model, got, tuple(diffs))


class _Hunt:
    """The failure a hunt keeps while Hypothesis shrinks it.

    The first failure fixes its kind (a disagreement, or a fault's class);
    while shrinking, only failures of that kind count, and a fault counts only
    when it recurs on a freshly started target (so a fault that depends on
    what came before cannot steer the shrinker). Faults that do not recur,
    hangs (each try costs the whole timeout) and a used-up restart budget end
    the hunt at once (:class:`_Stop`).
    """

    def __init__(self, codec: Codec, driver: TargetDriver, max_restarts: int) -> None:
        self.codec = codec
        self.driver = driver
        self.max_restarts = max_restarts
        self.kind: str | None = None
        self.best: Failure | None = None
        self.restarts_at_first = 0

    def check(self, case: Case, model: Outcome) -> Failure | None:
        """The failure ``case`` shows, if it is one that counts (else ``None``)."""
        request = self.codec.request_line(case.data)
        before = self.driver.answered()
        error: TargetProtocolError | None = None
        got: Outcome | None = None
        try:
            got = self.driver.outcome(case.data)
        except TargetProtocolError as exc:
            error = exc
        if error is not None:
            failure = self._fault(case, request, model, error, before)
        else:
            assert got is not None
            diffs = compare(model, got, self.codec.locate)
            failure = self._kept(Failure(case, request, model, got, tuple(diffs))
                                 if diffs else None)
        if self.kind is not None and self.best is not None and (
                self.driver.restarts() - self.restarts_at_first > self.max_restarts):
            raise _Stop(replace(self.best, note=f"shrinking stopped after {self.max_restarts} "
                                "target restarts; this is the smallest failing input found"))
        return failure

    def _kept(self, failure: Failure | None) -> Failure | None:
        if failure is None:
            return None
        if self.kind is None:
            self.kind, self.best = DISAGREEMENT, failure
        elif self.kind != DISAGREEMENT:
            return None  # a disagreement while shrinking a fault: not the failure kept
        self._offer(failure)
        return failure

    def _fault(self, case: Case, request: str, model: Outcome, error: TargetProtocolError,
               before: int | None) -> Failure | None:
        kind = type(error).__name__
        if self.kind is not None and kind != self.kind:
            return None  # another kind of failure while shrinking this one
        if isinstance(error, TargetTimeout):  # the first failure: a hang is reported as found
            raise _Stop(Failure(case, request, model, None, (), Fault(error, before, None)))
        retry = "" if before == 0 else self._retry(case.data)
        recurs = retry.startswith(kind + ":") or before == 0
        failure = Failure(case, request, model, None, (),
                          Fault(error, before, recurs, "" if recurs else retry))
        if self.kind is None:  # the first failure of the hunt
            self.kind, self.best = kind, failure
            self.restarts_at_first = self.driver.restarts()
            if not recurs:
                raise _Stop(failure)
            return failure
        if not recurs:
            return None
        self._offer(failure)
        return failure

    def _retry(self, data: Any) -> str:
        """Send ``data`` alone to a freshly started target: ``<ErrorClass>: message`` of its
        fault, or ``it was answered``."""
        self.driver.restart()
        try:
            self.driver.outcome(data)
        except TargetProtocolError as exc:
            return f"{type(exc).__name__}: {exc}"
        return "it was answered"

    def _offer(self, failure: Failure) -> None:
        """Keep the smaller failing input (shorter request line, then lexically smaller)."""
        if self.best is None or (len(failure.request), failure.request) < (
                len(self.best.request), self.best.request):
            self.best = failure


def difftest(codec: str | Codec, target: Callable[[Any], Any] | LineTarget, *, seed: int = 0,
             max_cases: int = 200, max_seconds: float | None = None,
             shrink: bool = True, clock: Callable[[], float] = time.monotonic,
             max_restarts: int = MAX_RESTARTS) -> Result:
    """Hunt for a disagreement or a fault between the model and ``target`` on one codec.

    ``max_cases`` bounds the inputs tried; ``max_seconds`` (optional) stops
    generating new ones after that long. The first failure is shrunk (unless
    ``shrink`` is false) and returned in :attr:`Result.failure`; a target that
    crashes is restarted for the next input, at most ``max_restarts`` times
    after its first fault (``specs/difftest.md``, "Target faults").
    """
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed
    from hypothesis.errors import Flaky

    if max_restarts < 0:
        raise ConfigError("max_restarts", f"must be >= 0, got {max_restarts}")
    spec = CODECS[codec] if isinstance(codec, str) else codec
    state = _Hunt(spec, TargetDriver(spec, target), max_restarts)
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
        model = model_outcome(spec, case.data)
        if not found:
            result.coverage.cases += 1
            result.coverage.by_source[case.source] += 1
            result.coverage.by_verdict[model.verdict] += 1
        failure = state.check(case, model)
        if failure is not None:
            found = True
            raise _Disagreement(failure)  # outside any `except`: no context, one origin

    try:
        hunt()
    except _Stop as stop:
        result.failure = stop.failure
    except _Disagreement as exc:  # Hypothesis replayed the shrunk failure: it reproduces
        result.failure = exc.failure
    except Flaky:  # the shrunk input no longer fails when replayed: report the smallest seen
        if state.best is None:
            raise
        result.failure = replace(state.best, note="it did not fail again when replayed: the "
                                 "target's answers depend on the inputs before it")
    finally:
        result.restarts = state.driver.restarts()
    return result


__all__ = ["DISAGREEMENT", "HEADLINES", "MAX_RESTARTS", "Coverage", "Failure", "Fault",
           "LineTarget", "RestartableTarget", "Result", "TargetDriver", "check_one",
           "difftest", "model_outcome", "target_runner"]
