"""Every decoder of the model: arbitrary or mutated bytes raise only DecodeError, and the
decoder is still usable afterwards (it decodes a valid input correctly right after).

Length fields: the capture container is the only format with variable lengths; its
"checked before allocating" property is tested with tracemalloc in test_capture.py.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ualink_ref.capture.format import (
    CaptureRecord,
    decode_capture,
    decode_capture_file,
    encode_capture,
)
from ualink_ref.capture.run import CaptureLink
from ualink_ref.dl import DataLink, DLFlit, TLFlitDelivered, decode_message
from ualink_ref.dl.formats import ALL_FORMATS as DL_FORMATS
from ualink_ref.dl.formats import FlitOp
from ualink_ref.errors import DecodeError, LinkFailedError
from ualink_ref.phy import decode_flits, encode_flits
from ualink_ref.sim.workloads import random_workload
from ualink_ref.testing.strategies import Mutation, mutations
from ualink_ref.tl.events import LinkFailed
from ualink_ref.tl.fields import ALL_FORMATS as TL_FORMATS
from ualink_ref.tl.fields import decode_field
from ualink_ref.tl.flit import decode_control_half, dissect

_FLIT = DLFlit(FlitOp.EXPLICIT, flit_seq=5, tl=bytes(range(64)) * 2).encode()

#: name -> (decoder, one valid input, check of its output)
DECODERS: dict[str, tuple[Callable[[bytes], Any], bytes, Callable[[Any], bool]]] = {
    "capture_file": (decode_capture_file, encode_capture([CaptureRecord(_FLIT)]),
                     lambda out: out[0].data[16:] == _FLIT),
    "capture": (decode_capture, encode_capture([CaptureRecord(_FLIT)], fmt="pcapng"),
                lambda out: out[0].data == _FLIT),
    "capture_record": (CaptureRecord.decode, CaptureRecord(_FLIT).encode(),
                       lambda out: out.data == _FLIT),
    "dl_flit": (DLFlit.decode, _FLIT, lambda out: out.flit_seq == 5),
    "dl_message": (decode_message, bytes(4), lambda out: type(out).__name__ == "NoOp"),
    "tl_flit": (dissect, bytes(64), lambda out: out.halves[0].kind == "control"),
    "tl_control_half": (decode_control_half, bytes(32), lambda out: len(out) == 8),
    "tl_field": (decode_field, bytes(4), lambda out: out[1]["ftype"] == 0),
    "phy_kp4": (lambda w: decode_flits(w, "kp4"), encode_flits(_FLIT, "kp4"),
                lambda out: out.flits == _FLIT),
    "phy_ll_interleave2": (lambda w: decode_flits(w, "ll", 2), encode_flits(_FLIT * 2, "ll", 2),
                           lambda out: out.flits == _FLIT * 2),
}
for _fmt in (*DL_FORMATS, *TL_FORMATS):
    DECODERS[f"bitformat_{_fmt.name}"] = (
        _fmt.unpack, _fmt.pack({}), lambda out, f=_fmt: set(out) == set(f.field_names))


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_valid_input_decodes(name: str) -> None:
    decode, valid, check = DECODERS[name]
    assert check(decode(valid))


@pytest.mark.parametrize("name", sorted(DECODERS))
@settings(max_examples=40)
@given(data=st.data())
def test_arbitrary_bytes_only_decode_error(name: str, data: st.DataObject) -> None:
    decode, valid, check = DECODERS[name]
    blob = data.draw(st.one_of(
        st.binary(max_size=1400),
        mutations(valid, max_flips=8).map(lambda m: m.data),
    ))
    with contextlib.suppress(DecodeError):
        decode(blob)
    assert check(decode(valid))  # still usable afterwards


@settings(max_examples=60)
@given(mutations(_FLIT, max_flips=3))
def test_dl_crc_catches_flips(m: Mutation) -> None:
    """1-3 bit flips in a DL flit are always caught (CRC-32 Hamming distance >= 4)."""
    with pytest.raises(DecodeError):
        DLFlit.decode(m.data)


@settings(max_examples=30)
@given(st.lists(st.binary(max_size=700), max_size=6))
def test_datalink_survives_garbage(garbage: list[bytes]) -> None:
    """A DataLink fed garbage reports it as events (never raises) and then recovers."""
    link = CaptureLink(fec="none")
    receiver: DataLink = link.sides["b"].dl
    for blob in garbage:
        events = receiver.receive(blob, 0.0)
        assert not any(isinstance(e, TLFlitDelivered) for e in events)
    ops = random_workload(6, seed=1)
    result = link.run(ops)
    assert len(result.completions["a"]) + len(result.completions["b"]) == len(ops)


@settings(max_examples=25)
@given(st.binary(min_size=64, max_size=64))
def test_transaction_layer_raises_only_ualink_errors_and_recovers(flit: bytes) -> None:
    """A garbage TL flit raises nothing (specs/tl.md rules E1-E7): bad fields are
    rejected on their own and the TL still completes a workload afterwards — unless a
    control half-flit cannot be decoded, which fails the link (E7): then new operations
    raise LinkFailedError."""
    link = CaptureLink()
    tl = link.sides["b"].tl
    events = tl.receive(flit)
    if tl.failed is not None:
        assert any(type(e) is LinkFailed for e in events)
        with pytest.raises(LinkFailedError):
            tl.read(1, 0, 4)
        return
    ops = random_workload(6, seed=1)
    result = link.run(ops, max_slots=5000)
    assert len(result.completions["a"]) + len(result.completions["b"]) == len(ops)
