"""Per-layer strategies produce values the model's own codecs accept and round-trip."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings

from ualink_ref.capture.run import CaptureLink
from ualink_ref.dl import DLFlit, decode_message, encode_message
from ualink_ref.sim.link_run import simulate
from ualink_ref.testing.strategies import (
    dl_flits,
    dl_messages,
    requests,
    tl_control_halves,
    tl_fields,
    tl_flits,
    workloads,
)
from ualink_ref.tl.fields import decode_field, encode_field
from ualink_ref.tl.flit import decode_control_half, dissect
from ualink_ref.tl.upli import Status


@given(dl_flits())
def test_dl_flits_round_trip(flit: DLFlit) -> None:
    assert DLFlit.decode(flit.encode()) == flit


@given(dl_messages())
def test_dl_messages_round_trip(message: Any) -> None:
    assert decode_message(encode_message(message)) == message


@given(tl_fields())
def test_tl_fields_round_trip(field: tuple[int, dict[str, int]]) -> None:
    ftype, values = field
    fmt, decoded = decode_field(encode_field(ftype, values))
    assert decoded == values and fmt.byte_length == len(encode_field(ftype, values))


@given(tl_control_halves())
def test_control_halves_decode(half: bytes) -> None:
    assert len(half) == 32 and decode_control_half(half)


@given(tl_flits())
def test_tl_flits_dissect_standalone(flit: bytes) -> None:
    view = dissect(flit)
    assert view.halves[0].kind == "control"


@given(requests())
def test_requests_are_legal(op: Any) -> None:
    link = CaptureLink()
    link.issue(op)  # raises EncodeError for an illegal request


@settings(max_examples=10)
@given(workloads(max_ops=12))
def test_workloads_complete(ops: list[Any]) -> None:
    result = CaptureLink().run(ops)
    done = result.completions["a"] + result.completions["b"]
    assert len(done) == len(ops)
    assert all(c.status == Status.OKAY for c in done)


@settings(max_examples=10)
@given(workloads(max_ops=12))
def test_workloads_simulate_against_the_sequential_model(ops: list[Any]) -> None:
    report = simulate(ops)
    assert report.ops_okay == len(ops) and report.data_mismatches == 0
