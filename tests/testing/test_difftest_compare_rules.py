"""difftest's comparison (specs/difftest.md "Comparison"; ``protocol.compare``) pinned at
its edges: verdict first, then every field by path, canonical JSON, byte outputs
located; the response line forms both ways.

Each test names the developer's bug it catches (issue 26).
"""

from __future__ import annotations

import pytest

from ualink_ref.errors import TargetProtocolError
from ualink_ref.testing.difftest.protocol import (
    BYTES,
    VERDICT,
    Difference,
    Outcome,
    compare,
    outcome_of,
    parse_response,
)


def _rows(diffs: list[Difference]) -> list[tuple[str, object, object]]:
    return [(d.field, d.model, d.target) for d in diffs]


def test_verdict_model_rejects_target_accepts() -> None:
    assert _rows(compare(Outcome("CrcError", detail="crc"), Outcome(None, {"a": 1}))) == [
        (VERDICT, "CrcError (crc)", "accept")]


def test_verdict_only_one_difference_even_when_fields_would_differ() -> None:
    # Verdict first: a rejected side has no fields to compare.
    assert len(compare(Outcome(None, {"a": 1, "b": 2}), Outcome("DecodeError"))) == 1


def test_same_error_class_agrees_and_unnamed_err_matches_only_errors() -> None:
    assert compare(Outcome("CrcError"), Outcome("CrcError")) == []
    assert compare(Outcome("CrcError", detail="x"), Outcome("")) == []
    # Bug caught: an unnamed ERR also "matching" an acceptance.
    assert _rows(compare(Outcome(None, {"a": 1}), Outcome(""))) == [(VERDICT, "accept", "ERR")]


def test_a_named_target_error_against_an_unnamed_model_error_differs() -> None:
    # The wildcard is the target's unnamed ERR only, not the model's.
    assert _rows(compare(Outcome(""), Outcome("CrcError"))) == [(VERDICT, "ERR", "CrcError")]


def test_every_differing_leaf_in_sorted_path_order() -> None:
    model = Outcome(None, {"z": 1, "a": {"y": [1, 2, 3], "x": 0}, "m": "q"})
    target = Outcome(None, {"z": 2, "a": {"y": [1, 5, 4], "x": 0}, "m": "q"})
    assert _rows(compare(model, target)) == [
        ("a.y[1]", 2, 5), ("a.y[2]", 3, 4), ("z", 1, 2)]


def test_a_field_present_on_one_side_only() -> None:
    assert _rows(compare(Outcome(None, {"a": 1}), Outcome(None, {"a": 1, "b": 0}))) == [
        ("b", "<absent>", 0)]
    assert _rows(compare(Outcome(None, {"a": 1, "c": 0}), Outcome(None, {"a": 1}))) == [
        ("c", 0, "<absent>")]


def test_lists_of_other_lengths_differ_as_a_whole() -> None:
    assert _rows(compare(Outcome(None, {"l": [1, 2]}), Outcome(None, {"l": [1, 2, 3]}))) == [
        ("l", [1, 2], [1, 2, 3])]


@pytest.mark.parametrize(("a", "b"), [(True, 1), (1.0, 1), (0, False), ("1", 1), (None, 0)])
def test_canonical_json_tells_types_apart(a: object, b: object) -> None:
    assert _rows(compare(Outcome(None, {"v": a}), Outcome(None, {"v": b}))) == [("v", a, b)]


def test_equal_values_agree() -> None:
    value = {"v": [True, 1.5, "s", {"k": None}]}
    assert compare(Outcome(None, value), Outcome(None, dict(value))) == []


@pytest.mark.parametrize(("length", "located"), [(16, False), (17, True)])
def test_long_equal_length_strings_name_the_first_differing_hex_char(length: int,
                                                                     located: bool) -> None:
    a = "0" * length
    b = "0" * (length - 3) + "1" + "02"
    [d] = compare(Outcome(None, {"h": a}), Outcome(None, {"h": b}))
    assert d.field == (f"h[hex char {length - 3}]" if located else "h")


def test_bytes_are_located_only_when_they_differ() -> None:
    calls: list[tuple[bytes, bytes]] = []

    def locate(m: bytes, t: bytes) -> list[Difference]:
        calls.append((m, t))
        return [Difference("crc", m.hex(), t.hex())]

    same = Outcome(None, {BYTES: "00ff"})
    assert compare(same, same, locate) == [] and calls == []
    assert _rows(compare(same, Outcome(None, {BYTES: "00fe"}), locate)) == [("crc", "00ff", "00fe")]
    assert calls == [(b"\x00\xff", b"\x00\xfe")]


def test_bytes_fall_back_to_the_value_when_the_locator_finds_nothing() -> None:
    diffs = compare(Outcome(None, {BYTES: "00"}), Outcome(None, {BYTES: "01"}), lambda m, t: [])
    assert _rows(diffs) == [(BYTES, "00", "01")]


def test_a_scalar_difference_without_a_path_is_named_value() -> None:
    # Only a value that is not an object reaches the root unnamed (against Outcome's type:
    # an adapter's bug): it is still compared and named, not a crash.
    diffs = compare(Outcome(None, [1]), Outcome(None, [1, 2]))  # type: ignore[arg-type]
    assert _rows(diffs) == [("<value>", [1], [1, 2])]


@pytest.mark.parametrize(("line", "outcome"), [
    ("ERR CrcError trailing words", Outcome("CrcError")),
    ("ERR", Outcome("")), ("  ERR  ", Outcome("")),
    ('{"a":[1]}', Outcome(None, {"a": [1]})), ("", Outcome(None, {BYTES: ""})),
    ("ABCD", Outcome(None, {BYTES: "abcd"}))])
def test_response_lines_parse(line: str, outcome: Outcome) -> None:
    assert parse_response(line) == outcome


@pytest.mark.parametrize(("line", "why"), [
    ("ERRx", "response is neither ERR, JSON nor hex"), ("{", "response is not valid JSON"),
    ("[]", "response is neither ERR, JSON nor hex"), ("abc", "neither ERR, JSON nor hex"),
    ("zz", "neither ERR, JSON nor hex"), ("[1]", "neither"),
    ('"x"', "neither"), ("{1: 2}", "not valid JSON")])
def test_bad_response_lines_are_protocol_errors_naming_the_line(line: str, why: str) -> None:
    with pytest.raises(TargetProtocolError) as info:
        parse_response(line)
    assert info.value.line == line
    assert why in str(info.value) and repr(line) in str(info.value)


@pytest.mark.parametrize("outcome", [Outcome("CrcError"), Outcome(""),
                                     Outcome(None, {BYTES: "0a"}), Outcome(None, {"b": 1, "a": 2})])
def test_a_line_parses_back_to_its_outcome(outcome: Outcome) -> None:
    assert parse_response(outcome.line()) == outcome
    assert Outcome(None, {"b": 1, "a": 2}).line() == '{"a":2,"b":1}'


def test_outcome_of_a_line_and_a_bad_return() -> None:
    assert outcome_of(lambda _: "ERR CrcError", b"") == Outcome("CrcError")
    assert outcome_of(lambda _: {"t": (1, 2)}, b"").value == {"t": [1, 2]}
    with pytest.raises(TargetProtocolError) as info:
        outcome_of(lambda _: 5, b"")
    assert info.value.line == ""
    assert str(info.value) == "implementation returned int, not bytes, dict or a line"


def test_a_difference_shows_long_values_cut() -> None:
    text = str(Difference("f", "a" * 100, 3))
    assert text == "f: model " + "a" * 67 + "..., target 3"
    assert str(Difference("f", "a" * 70, [1])) == "f: model " + "a" * 70 + ", target [1]"
