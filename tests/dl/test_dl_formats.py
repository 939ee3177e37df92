"""Every DL BitFormat and DL message: round trips, bad input -> only DecodeError, specs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.bitfields import BitFormat
from ualink_ref.dl.formats import ALL_FORMATS
from ualink_ref.dl.messages import DLMessage, UnknownMessage, decode_message, encode_message
from ualink_ref.errors import DecodeError
from ualink_ref.testing.strategies import known_dl_messages as dl_messages

ROOT = Path(__file__).resolve().parents[2]


@st.composite
def _values(draw: st.DrawFn, fmt: BitFormat) -> dict[str, int]:
    return {f.name: 0 if f.reserved else draw(st.integers(0, f.max_value)) for f in fmt.fields}


@pytest.mark.parametrize("fmt", ALL_FORMATS, ids=lambda f: f.name)
@given(data=st.data())
def test_format_round_trip(fmt: BitFormat, data: st.DataObject) -> None:
    values = data.draw(_values(fmt))
    strict = [f for f in fmt.fields if f.strict_enum and f.enum]
    for f in strict:
        values[f.name] = data.draw(st.sampled_from(sorted(f.enum or {})))
    assert fmt.unpack(fmt.pack(values)) == values


@pytest.mark.parametrize("fmt", ALL_FORMATS, ids=lambda f: f.name)
@given(raw=st.binary(max_size=8))
def test_format_arbitrary_bytes_only_decode_error(fmt: BitFormat, raw: bytes) -> None:
    try:
        values = fmt.unpack(raw)
    except DecodeError:
        return
    assert fmt.pack(values) == raw


@given(dl_messages())
def test_message_round_trip(message: DLMessage) -> None:
    word = message.encode()
    assert decode_message(word) == message
    assert decode_message(encode_message(message)) == message


@given(st.integers(-(1 << 33), 1 << 33) | st.binary(max_size=6))
def test_message_arbitrary_words_decode_or_raise_decode_error(word: int | bytes) -> None:
    try:
        message = decode_message(word)
    except DecodeError:
        return
    as_int = int.from_bytes(word, "big") if isinstance(word, bytes) else word
    assert message.encode() == as_int  # canonical: unknown words are kept verbatim


def test_unknown_class_and_type_decode_to_unknown_message() -> None:
    assert decode_message(0b0011 << 2) == UnknownMessage(0b1100)  # class 0011
    assert decode_message(0b001 << 6) == UnknownMessage(0b001 << 6)  # basic type 001
    assert decode_message(1) == UnknownMessage(1)  # compressed


def test_spec_tables_equal_the_declarations() -> None:
    spec = (ROOT / "specs" / "dl.md").read_text()
    for fmt in ALL_FORMATS:
        heading = f"### `{fmt.name}` ({fmt.bit_length} bits)"
        assert heading in spec, f"{fmt.name} missing from specs/dl.md"
        section = spec.split(heading, 1)[1]
        table = re.search(r"(\| Bits \|.*?\n)(?!\|)", section, re.S)
        assert table is not None
        assert table.group(1) == fmt.markdown_table(), f"table of {fmt.name} differs"


@pytest.mark.parametrize("word", [1.5, "abcd", None, [0, 0, 0, 0], True, object()])
def test_message_decoder_rejects_non_words_with_decode_error(word: object) -> None:
    # Found in review: these escaped as TypeError (or, for True, decoded as a word).
    with pytest.raises(DecodeError):
        decode_message(word)  # type: ignore[arg-type]


def test_message_decoder_accepts_memoryview_like_the_other_decoders() -> None:
    word = encode_message(UnknownMessage(0b0011 << 2))
    assert decode_message(memoryview(word)) == decode_message(word)
    assert decode_message(bytearray(word)) == decode_message(word)
