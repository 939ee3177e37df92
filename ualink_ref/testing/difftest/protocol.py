"""The difftest line protocol and the comparison of two outcomes.

One request line in, one response line out (``specs/difftest.md``):

* request: the input as lowercase hex (decoders and byte transforms), or one
  JSON object of field values (encoders);
* response: ``ERR <ErrorClass>`` (rejected; the class may be left out as
  ``ERR``), a JSON object ``{...}`` of fields (accepted, decoders), or hex
  (accepted, the output bytes).

An :class:`Outcome` is the parsed form of a response; :func:`compare` gives
the field-level :class:`Difference` list between the model's outcome and the
target's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ualink_ref.errors import TargetProtocolError

#: Response prefix of a rejected input.
ERR = "ERR"
#: Field name used for a verdict difference (accepted vs rejected, or which error class).
VERDICT = "verdict"
#: Field name of byte outputs given as hex.
BYTES = "bytes"


@dataclass(frozen=True)
class Outcome:
    """What an implementation did with one input.

    ``error`` is ``None`` when it accepted the input, else the error class
    name (``""`` when the implementation rejected it without naming a class).
    ``value`` holds the output fields when accepted (byte outputs as
    ``{"bytes": hex}``). ``detail`` says more about an error (e.g. the model's
    field name); it is shown, never compared.
    """

    error: str | None
    value: dict[str, Any] | None = None
    detail: str = ""

    @property
    def verdict(self) -> str:
        """``accept`` or the error class name (``ERR`` when unnamed)."""
        if self.error is None:
            return "accept"
        return self.error or ERR

    def line(self) -> str:
        """This outcome as a response line (no newline)."""
        if self.error is not None:
            return f"{ERR} {self.error}".rstrip()
        assert self.value is not None
        if set(self.value) == {BYTES}:
            return str(self.value[BYTES])
        return json.dumps(self.value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Difference:
    """One field where the model and the target disagree."""

    field: str
    model: Any
    target: Any

    def __str__(self) -> str:
        return f"{self.field}: model {_show(self.model)}, target {_show(self.target)}"


def _show(value: Any, limit: int = 70) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_response(line: str) -> Outcome:
    """Parse one response line; raises :class:`TargetProtocolError` when it is none of the forms."""
    text = line.strip()
    if text == ERR or text.startswith(ERR + " "):
        parts = text.split()
        return Outcome(parts[1] if len(parts) > 1 else "")
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TargetProtocolError(f"response is not valid JSON: {exc}", line) from None
        if not isinstance(value, dict):
            raise TargetProtocolError("a JSON response must be an object", line)
        return Outcome(None, value)
    try:
        data = bytes.fromhex(text)
    except ValueError:
        raise TargetProtocolError("response is neither ERR, JSON nor hex", line) from None
    return Outcome(None, {BYTES: data.hex()})


def outcome_of(function: Callable[[Any], Any], data: Any) -> Outcome:
    """Run a Python implementation on one input and turn what it did into an :class:`Outcome`.

    A return of ``bytes`` is a byte output, a ``dict`` a field output, a
    ``str`` a response line; any exception is a rejection named by its class
    (so a decoder that raises ``IndexError`` disagrees with the model's
    ``DecodeError``).
    """
    try:
        result = function(data)
    except Exception as exc:  # the class of whatever escaped *is* the verdict
        return Outcome(type(exc).__name__, detail=str(exc)[:200])
    if isinstance(result, bytes | bytearray | memoryview):
        return Outcome(None, {BYTES: bytes(result).hex()})
    if isinstance(result, dict):
        # Round-trip through JSON so tuples, bools and ints compare as they would on the wire.
        return Outcome(None, json.loads(json.dumps(result)))
    if isinstance(result, str):
        return parse_response(result)
    raise TargetProtocolError(
        f"implementation returned {type(result).__name__}, not bytes, dict or a line", "")


ByteLocator = Callable[[bytes, bytes], list[Difference]]


def compare(model: Outcome, target: Outcome,
            locate: ByteLocator | None = None) -> list[Difference]:
    """Field-level differences between two outcomes (empty: they agree).

    Verdicts are compared first (a target's unnamed ``ERR`` matches any model
    error); then fields, recursively, naming each differing leaf by its path;
    byte outputs are split into fields by ``locate`` when given.
    """
    if model.error is not None or target.error is not None:
        if model.error is None or target.error is None or (
                target.error and target.error != model.error):
            shown = model.verdict + (f" ({model.detail})" if model.detail else "")
            return [Difference(VERDICT, shown, target.verdict)]
        return []
    mv, tv = model.value or {}, target.value or {}
    if set(mv) == {BYTES} and set(tv) == {BYTES} and locate is not None and mv != tv:
        found = locate(bytes.fromhex(mv[BYTES]), bytes.fromhex(tv[BYTES]))
        if found:
            return found
    out: list[Difference] = []
    _diff("", mv, tv, out)
    return out


def _diff(path: str, a: Any, b: Any, out: list[Difference]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                out.append(Difference(sub, a.get(key, "<absent>"), b.get(key, "<absent>")))
            else:
                _diff(sub, a[key], b[key], out)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(f"{path}[{i}]", x, y, out)
        return
    # Canonical JSON: `true` is not `1`, `1.0` is not `1`.
    if json.dumps(a, sort_keys=True) != json.dumps(b, sort_keys=True):
        if isinstance(a, str) and isinstance(b, str) and len(a) > 16 and len(a) == len(b):
            at = next(i for i in range(len(a)) if a[i] != b[i])
            path = f"{path}[hex char {at}]"
        out.append(Difference(path or "<value>", a, b))


__all__ = ["BYTES", "ERR", "VERDICT", "ByteLocator", "Difference", "Outcome", "compare",
           "outcome_of", "parse_response"]
