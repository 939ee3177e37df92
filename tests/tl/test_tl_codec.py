"""The TL codec and field declarations (``tl/fields.py``, ``tl/codec.py``): hand-derived
packing, round trips, the typed codec against the declaration, the control-word walk, bad input.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.bitfields import BitFormat
from ualink_ref.errors import DecodeError, EncodeError, UALinkError
from ualink_ref.testing.strategies import tl_fields, tl_stream_halves
from ualink_ref.tl import TransactionLayer
from ualink_ref.tl import codec as C
from ualink_ref.tl import fields as F
from ualink_ref.tl.flit import (
    decode_control_half,
    dissect,
    dissect_stream,
    encode_control_half,
)

# -- TL field layouts: hand-derived packing, round trips, fast path == declared path, bad input

def test_sizes_are_the_public_sector_counts() -> None:
    # public: FC 1 sector, request 4, response 2, compressed request 2, compressed responses 1.
    assert F.SECTORS == {0: 1, 1: 4, 2: 2, 3: 2, 4: 1, 5: 1, 6: 1}
    widths = {f.name: f.width for f in F.REQUEST.fields}
    assert widths == {
        "ftype": 4, "cmd": 6, "vchan": 2, "asi": 2, "tag": 11, "pool": 1, "attr": 8, "len": 6,
        "metadata": 8, "addr": 55, "src_acc": 10, "dst_acc": 10, "cload": 1, "cway": 2,
        "numbeats": 2,
    }
    assert [f.width for f in F.RESPONSE.fields] == [4, 2, 11, 1, 2, 2, 4, 1, 1, 10, 10, 16]
    assert [f.width for f in F.FLOW_CONTROL.fields] == [4, 6, 6, 8, 8]


def test_every_field_has_provenance_and_description() -> None:
    for fmt in F.ALL_FORMATS:
        for f in fmt.fields:
            assert f.provenance and f.description, (fmt.name, f.name)


def test_hand_derived_flow_control() -> None:
    # 0000 | 000001 | 000010 | 00000011 | 00000100  -> 0x00420304 (worked by hand)
    assert F.FLOW_CONTROL.pack(req_cmd=1, rsp_cmd=2, req_data=3, rsp_data=4) == bytes.fromhex(
        "00420304"
    )


def test_hand_derived_request() -> None:
    # ftype=1 in bits 127..124; dst_acc in bits 14..5; numbeats in bits 1..0 (worked by hand).
    raw = F.REQUEST.pack(ftype=1, dst_acc=1, numbeats=3)
    assert raw == bytes.fromhex("10" + "00" * 14 + "23")
    # cmd=0x29 (101001) right after ftype: 0001 1010 | 01 00 00 00 -> 1a 40
    assert F.REQUEST.pack(ftype=1, cmd=0x29)[:2] == bytes.fromhex("1a40")
    # addr field holds address bits 56..2 in bits 79..25: address 4 -> field 1 -> bit 25.
    assert int.from_bytes(C.pack_field(C.Request(0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0))) == (
        1 << 124 | 1 << 25
    )


def test_hand_derived_response() -> None:
    # ftype=2 (0010) then vchan=3 (11) then tag top 2 bits 00: 0010 1100 -> 0x2c
    raw = F.RESPONSE.pack(ftype=2, vchan=3, dst_acc=1)
    assert raw == bytes.fromhex("2c00000000010000")  # dst_acc lsb is bit 16


def _values(fmt: BitFormat) -> st.SearchStrategy[dict[str, int]]:
    parts = {}
    for f in fmt.fields:
        if f.name == "ftype":
            parts[f.name] = st.just(f.default)
        elif f.reserved:
            parts[f.name] = st.just(0)
        else:
            parts[f.name] = st.integers(0, f.max_value)
    return st.fixed_dictionaries(parts)


@pytest.mark.parametrize("fmt", F.ALL_FORMATS, ids=lambda f: f.name)
@given(data=st.data())
def test_round_trip_every_format(fmt: BitFormat, data: st.DataObject) -> None:
    values = data.draw(_values(fmt))
    raw = fmt.pack(values)
    got_fmt, got = F.decode_field(raw)
    assert got_fmt is fmt and got == values


@pytest.mark.parametrize("fmt", F.ALL_FORMATS, ids=lambda f: f.name)
@given(data=st.data())
def test_typed_codec_matches_declaration(fmt: BitFormat, data: st.DataObject) -> None:
    # The typed value classes (the engine's path) and BitFormat.pack/unpack (the readable
    # path) agree bit for bit, both ways; addresses are byte addresses in the typed values.
    v = data.draw(_values(fmt))
    raw = fmt.pack(v)
    value = C.unpack_field(raw)
    assert C.format_of(value) is fmt
    assert C.as_dict(value) == v
    assert C.pack_field(value) == raw
    for name in ("addr", "addr_lo"):
        if name in v:
            assert getattr(value, name) == v[name] << 2


@pytest.mark.parametrize("fmt", F.ALL_FORMATS, ids=lambda f: f.name)
def test_typed_classes_mirror_their_declarations(fmt: BitFormat) -> None:
    cls = C.CLASSES[F.FType(fmt.field("ftype").default)]
    assert list(cls._fields) == [f.name for f in fmt.fields if f.name != "ftype"]
    assert C.SECTORS_OF[fmt.field("ftype").default] * 4 == fmt.byte_length


def test_typed_pack_rejects_what_does_not_fit() -> None:
    with pytest.raises(EncodeError):
        C.pack_field(C.FlowControl(req_cmd=64))  # 6 bits
    with pytest.raises(EncodeError):
        C.pack_field(C.Request(0x29, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0))  # addr not 4-aligned
    with pytest.raises(EncodeError):
        C.pack_field(C.VcFlowControl(vchan=-1))


def test_encode_rejects_out_of_range() -> None:
    with pytest.raises(EncodeError):
        F.encode_field(1, {"tag": 1 << 11})
    with pytest.raises(EncodeError):
        F.encode_field(2, {"spare": 1})
    with pytest.raises(DecodeError):
        F.encode_field(9, {})
    with pytest.raises(EncodeError):
        encode_control_half([(1, {}), (1, {}), (0, {})])  # 9 sectors


def test_control_half_round_trip_and_padding() -> None:
    fields = [(0, {"req_cmd": 5}), (2, {"tag": 7, "status": 2}), (1, {"cmd": 0x03, "tag": 9})]
    half = encode_control_half(fields)
    assert len(half) == 32 and half[28:] == bytes(4)  # 1 + 2 + 4 sectors, one NOP pad
    decoded = decode_control_half(half)
    assert [f.sector for f in decoded] == [0, 1, 3, 7]
    assert decoded[1].values["tag"] == 7 and decoded[2].values["cmd"] == 0x03
    assert decoded[3].is_nop


def test_straddling_field_is_rejected() -> None:
    half = bytes(4 * 6) + F.REQUEST.pack(ftype=1, cmd=3)[:8]
    with pytest.raises(DecodeError):
        decode_control_half(half)


def test_dissect_counts_data_half_flits() -> None:
    # A WriteFull of 128 bytes (2 beats) is followed by 4 data half-flits.
    ctrl = encode_control_half([(1, {"cmd": 0x29, "len": 31, "numbeats": 1})])
    views = dissect_stream([ctrl + b"\x11" * 32, b"\x22" * 64, b"\x33" * 32 + bytes(32)])
    assert [h.kind for v in views for h in v.halves] == ["control"] + ["data"] * 4 + ["control"]
    assert [v.pending_after for v in views] == [3, 1, 0]
    # A Write (0x28) has one byte-enable half-flit more.
    ctrl = encode_control_half([(1, {"cmd": 0x28, "len": 0, "numbeats": 0})])
    assert dissect(ctrl + bytes(32)).pending_after == 2


@given(st.binary(min_size=0, max_size=80), st.integers(0, 3))
def test_dissect_arbitrary_bytes_raises_only_decode_error(data: bytes, pending: int) -> None:
    try:
        view = dissect(data, pending)
    except DecodeError:
        return
    assert len(data) == 64 and len(view.halves) == 2


@given(st.binary(min_size=0, max_size=40))
def test_decode_field_arbitrary_bytes(data: bytes) -> None:
    try:
        fmt, values = F.decode_field(data)
    except DecodeError:
        return
    assert fmt.pack(values) == data  # whatever decodes re-encodes to the same bytes


@given(st.lists(st.binary(min_size=64, max_size=64), min_size=1, max_size=4))
def test_engine_receive_arbitrary_flits_raises_only_ualink_errors(flits: list[bytes]) -> None:
    tl = TransactionLayer(1)
    for flit in flits:
        try:
            tl.receive(flit)
        except UALinkError:
            return


@given(tl_fields(), st.data())
def test_pack_field_refuses_a_value_that_does_not_fit(field: tuple[int, dict[str, int]],
                                                      data: st.DataObject) -> None:
    """A field value pushed past its width, negative, or not an integer at all is an
    EncodeError naming that field (never a TypeError or silent truncation)."""
    ftype, values = field
    value = C.from_dict(ftype, values)
    cls = type(value)
    i = data.draw(st.integers(0, len(value) - 1))
    wrong = data.draw(st.sampled_from([(1 << 64) + value[i], -1, float(value[i]),
                                       None, str(value[i])]))
    misfit = cls._make((*value[:i], wrong, *value[i + 1:]))
    with pytest.raises(EncodeError) as got:
        C.pack_field(misfit)
    assert got.value.field == cls._fields[i]


def test_pack_field_refuses_what_is_not_a_field() -> None:
    with pytest.raises(EncodeError):
        C.pack_field((1, 2))  # type: ignore[arg-type]



# -- ``codec.control_words``: the walk of ``decode_control_half`` without typed values

def _typed(half: bytes) -> object:
    try:
        return [C.FTYPE_OF[type(v)] for _, v in C.decode_control_half(half)], [
            v for _, v in C.decode_control_half(half)]
    except DecodeError as exc:
        return type(exc), str(exc)


def _words(half: bytes) -> object:
    try:
        found = C.control_words(half)
    except DecodeError as exc:
        return type(exc), str(exc)
    return [ft for ft, _ in found], [C.unpack_word(ft, bits) for ft, bits in found]


@given(st.one_of(tl_stream_halves(), st.binary(min_size=0, max_size=40)))
def test_control_words_walk_as_decode_control_half(half: bytes) -> None:
    # Same fields in the same order (typed by unpack_word), or the same error.
    assert _words(half) == _typed(half)


def test_control_words_of_a_known_half() -> None:
    fc = C.pack_field(C.FlowControl(req_cmd=5))
    rsp = C.pack_field(C.CompressedResponseNoData(vchan=1, tag=7, pool=0, len=0))
    half = fc + rsp + bytes(32 - len(fc) - len(rsp))
    assert C.control_words(half) == [(0, int.from_bytes(fc, "big")),
                                     (5, int.from_bytes(rsp, "big"))]
    assert C.control_words(bytes(32)) == []
