from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.bitfields import BitFormat, Field, enum_of
from ualink_ref.errors import (
    DecodeError,
    EncodeError,
    FieldRangeError,
    ReservedBitsError,
    TruncatedError,
)

# A hand-laid 24-bit header: op 3 | payload 1 | rsvd 3 | seq 9 | rsvd 8.
HEADER = BitFormat(
    "example_header",
    [
        Field("op", 3, "operation", "test", enum=enum_of("a", "b", "c")),
        Field("payload", 1, "carries payload", "test"),
        Field("rsvd0", 3, "", "test", reserved=True),
        Field("seq", 9, "sequence number", "test"),
        Field("rsvd1", 8, "", "test", reserved=True),
    ],
)

STRICT = BitFormat(
    "strict",
    [Field("kind", 4, "kind", "test", enum={1: "one", 2: "two"}, strict_enum=True),
     Field("value", 12, "value", "test")],
)


def test_pack_hand_derived() -> None:
    # op=2 -> 010, payload=1 -> 1, rsvd 000, seq=0x1A5 -> 1 1010 0101, rsvd 0
    # bits: 010 1 000 110100101 00000000 = 0101 0001 1010 0101 0000 0000 = 0x51A500
    assert HEADER.pack(op=2, payload=1, seq=0x1A5) == bytes.fromhex("51a500")
    assert HEADER.unpack(bytes.fromhex("51a500")) == {
        "op": 2, "payload": 1, "rsvd0": 0, "seq": 0x1A5, "rsvd1": 0,
    }


def test_positions_msb_first() -> None:
    assert HEADER.bit_length == 24 and HEADER.byte_length == 3
    assert (HEADER.position("op").msb, HEADER.position("op").lsb) == (23, 21)
    assert (HEADER.position("seq").msb, HEADER.position("seq").lsb) == (16, 8)


@given(op=st.integers(0, 7), payload=st.integers(0, 1), seq=st.integers(0, 511))
def test_round_trip(op: int, payload: int, seq: int) -> None:
    values = {"op": op, "payload": payload, "seq": seq}
    decoded = HEADER.unpack(HEADER.pack(values))
    assert {k: decoded[k] for k in values} == values


@given(st.binary(max_size=8))
def test_arbitrary_bytes_raise_only_decode_errors(data: bytes) -> None:
    for fmt in (HEADER, STRICT):
        try:
            values = fmt.unpack(data)
        except DecodeError:
            continue
        assert set(values) == set(fmt.field_names)
        assert fmt.pack(values) == data


def test_encode_errors_name_the_field() -> None:
    with pytest.raises(EncodeError) as exc:
        HEADER.pack(seq=512)
    assert exc.value.field == "seq"
    with pytest.raises(EncodeError, match="rsvd0"):
        HEADER.pack(rsvd0=1)
    with pytest.raises(EncodeError, match="nope"):
        HEADER.pack(nope=1)
    with pytest.raises(EncodeError, match="seq"):
        HEADER.pack(seq=-1)
    with pytest.raises(EncodeError, match="integer"):
        HEADER.pack(seq="1")  # type: ignore[arg-type]


def test_decode_errors() -> None:
    with pytest.raises(TruncatedError):
        HEADER.unpack(b"\x00\x00")
    with pytest.raises(TruncatedError):
        HEADER.unpack(b"\x00" * 4)
    with pytest.raises(ReservedBitsError) as exc:
        HEADER.unpack(bytes.fromhex("000001"))
    assert "rsvd1" in str(exc.value)
    with pytest.raises(FieldRangeError):
        STRICT.unpack(bytes.fromhex("3000"))
    lenient = BitFormat("lenient", HEADER.fields, check_reserved=False)
    assert lenient.unpack(bytes.fromhex("000001"))["rsvd1"] == 1


def test_unpack_from_offset() -> None:
    data = b"\xff" + HEADER.pack(op=1, seq=3) + b"\xff"
    assert HEADER.unpack_from(data, 1)["seq"] == 3
    with pytest.raises(TruncatedError):
        HEADER.unpack_from(data, 3)


def test_markdown_table_lists_every_field() -> None:
    table = HEADER.markdown_table()
    assert table.count("\n") == 2 + len(HEADER.fields)
    assert "| [23:21] | `op` | 3 |" in table
    assert "0 = a, 1 = b, 2 = c" in table


def test_describe_uses_enum_names() -> None:
    assert HEADER.describe(HEADER.unpack(HEADER.pack(op=1, seq=5))) == (
        "example_header[op=b(1) payload=0x0 seq=0x5]"
    )


def test_bad_declarations_rejected() -> None:
    with pytest.raises(ValueError):
        Field("bad name", 1)
    with pytest.raises(ValueError):
        Field("x", 0)
    with pytest.raises(ValueError):
        Field("x", 2, enum={4: "too big"})
    with pytest.raises(ValueError):
        BitFormat("dup", [Field("a", 4), Field("a", 4)])
    with pytest.raises(ValueError):
        _ = BitFormat("odd", [Field("a", 3)]).byte_length


@pytest.mark.parametrize("word", [1.5, 2.0, "1", None, b"\x01", [1]])
def test_from_int_rejects_non_integers_with_decode_error(word: object) -> None:
    # Found in review: a float or str escaped as TypeError from the comparison.
    with pytest.raises(DecodeError):
        HEADER.from_int(word)  # type: ignore[arg-type]


@pytest.mark.parametrize(("data", "offset"), [(None, 0), ("abcd", 0), (b"\x00" * 8, 1.5),
                                              (b"\x00" * 8, None), (b"\x00" * 8, True)])
def test_unpack_from_rejects_bad_arguments_with_decode_error(data: object, offset: object) -> None:
    # Found in review: these escaped as TypeError.
    with pytest.raises(DecodeError):
        HEADER.unpack_from(data, offset)  # type: ignore[arg-type]
