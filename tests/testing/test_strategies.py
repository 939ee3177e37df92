"""The generic strategies of ualink_ref.testing.strategies do what they promise."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.bitfields import BitFormat, Field, enum_of
from ualink_ref.errors import DecodeError, FieldRangeError, ReservedBitsError
from ualink_ref.testing.strategies import (
    Mutation,
    bit_flips,
    extensions,
    format_bytes,
    format_values,
    mutations,
    reserved_bits_set,
    truncations,
    unknown_enum_values,
    wrong_lengths,
)

FMT = BitFormat(
    "demo",
    [
        Field("op", 3, "op", "test", enum=enum_of("a", "b", "c"), strict_enum=True),
        Field("rsvd", 5, "", "test", reserved=True),
        Field("len", 8, "length", "test"),
        Field("kind", 2, "kind", "test", enum=enum_of("x", "y")),
        Field("tail", 14, "tail", "test"),
    ],
)


@given(format_values(FMT))
def test_format_values_are_packable(values: dict[str, int]) -> None:
    assert FMT.unpack(FMT.pack(values)) == values
    assert values["rsvd"] == 0 and values["op"] in (0, 1, 2)


@given(format_values(FMT, fixed={"op": 2, "len": 7}))
def test_fixed_fields(values: dict[str, int]) -> None:
    assert values["op"] == 2 and values["len"] == 7


@given(format_values(FMT, valid_only=False))
def test_invalid_values_fit_their_widths(values: dict[str, int]) -> None:
    for f in FMT.fields:
        assert 0 <= values[f.name] <= f.max_value


@given(format_bytes(FMT))
def test_format_bytes_decode(data: bytes) -> None:
    assert len(data) == FMT.byte_length
    FMT.unpack(data)


@given(reserved_bits_set(FMT))
def test_reserved_bits_set_rejected(data: bytes) -> None:
    with pytest.raises(ReservedBitsError):
        FMT.unpack(data)


@given(unknown_enum_values(FMT))
def test_unknown_enum_values_rejected(data: bytes) -> None:
    with pytest.raises(FieldRangeError):
        FMT.unpack(data)


def test_strategies_refuse_formats_without_targets() -> None:
    plain = BitFormat("plain", [Field("x", 8, "x", "test")])
    with pytest.raises(ValueError):
        reserved_bits_set(plain)
    with pytest.raises(ValueError):
        unknown_enum_values(plain)
    with pytest.raises(ValueError):
        bit_flips(b"ab", min_flips=2, max_flips=1)


@given(bit_flips(st.binary(min_size=1, max_size=40), min_flips=1, max_flips=5))
def test_bit_flips_flip_exactly_the_reported_bits(m: Mutation) -> None:
    assert m.kind == "bit_flip" and len(m.data) == len(m.original)
    diff = int.from_bytes(m.original, "big") ^ int.from_bytes(m.data, "big")
    nbits = 8 * len(m.original)
    assert {i for i in range(nbits) if diff >> (nbits - 1 - i) & 1} == set(m.detail)
    assert 1 <= len(m.detail) <= 5


@given(truncations(b"abcdef"))
def test_truncations_are_proper_prefixes(m: Mutation) -> None:
    assert len(m.data) < 6 and b"abcdef".startswith(m.data) and m.detail == (len(m.data),)


@given(extensions(format_bytes(FMT)))
def test_extensions_are_longer(m: Mutation) -> None:
    assert len(m.data) > len(m.original) and m.data.startswith(m.original)


@given(wrong_lengths(FMT.byte_length))
def test_wrong_lengths_are_rejected(data: bytes) -> None:
    with pytest.raises(DecodeError):
        FMT.unpack(data)


@given(mutations(format_bytes(FMT)))
def test_mutations_differ(m: Mutation) -> None:
    assert m.data != m.original
    assert m.kind in ("bit_flip", "truncate", "extend")


def test_core_never_imports_strategies_or_hypothesis() -> None:
    code = (
        "import sys, ualink_ref, ualink_ref.capture.format, ualink_ref.bitfields;"
        "import ualink_ref.testing.vectors;"
        "bad = [m for m in sys.modules"
        " if m.startswith(('hypothesis', 'ualink_ref.testing.strategies'))];"
        "print(bad); raise SystemExit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
