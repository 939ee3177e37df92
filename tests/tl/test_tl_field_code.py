"""The generated field code (ualink_ref/tl/field_code.py): current, and bit-exact
against the declarations' own generic codec (``BitFormat.pack`` / ``unpack``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.errors import EncodeError
from ualink_ref.tl import field_code, field_code_gen
from ualink_ref.tl.fields import BYTE_ADDRESS_LOW_BITS, FORMATS


def test_the_committed_module_is_what_the_generator_writes() -> None:
    assert field_code_gen.TARGET.read_text() == field_code_gen.render(), (
        "tl/field_code.py is stale: run python -m ualink_ref.tl.field_code_gen")


def test_every_layout_has_both_functions() -> None:
    assert set(field_code.ENCODE_BY_FTYPE) == set(field_code.UNPACK_BY_FTYPE) == set(FORMATS)


def test_a_new_layout_without_code_is_a_clear_error_not_an_import_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The generator imports the codec, so the codec must import while the generated
    # module lags a layout just declared: the gap shows only when that layout is used.
    from ualink_ref.tl import codec

    monkeypatch.setitem(codec._ENCODE, codec.FlowControl, None)
    with pytest.raises(AssertionError, match="field_code_gen"):
        codec.pack_field(codec.FlowControl())


@st.composite
def _field_values(draw: st.DrawFn) -> tuple[int, dict[str, int]]:
    ftype = draw(st.sampled_from(sorted(FORMATS)))
    fmt = FORMATS[ftype]
    # A reserved field is zero when the declaration encodes it (its own rule); the typed
    # codec carries whatever it is given, which the out-of-range test covers.
    wire = {f.name: 0 if f.reserved else draw(st.integers(0, f.max_value))
            for f in fmt.fields if f.name != "ftype"}
    return ftype, wire


@given(_field_values())
def test_pack_and_unpack_agree_with_the_declaration(case: tuple[int, dict[str, int]]) -> None:
    ftype, wire = case
    fmt = FORMATS[ftype]
    # The typed values hold byte addresses: the wire's bits shifted up (low bits zero).
    values = tuple(v << BYTE_ADDRESS_LOW_BITS.get(n, 0) for n, v in wire.items())
    expected = fmt.pack(ftype=ftype, **wire)
    encode = field_code.ENCODE_BY_FTYPE[ftype]
    assert encode(**dict(zip(wire, values, strict=True))) == expected
    assert field_code.UNPACK_BY_FTYPE[ftype](int.from_bytes(expected, "big")) == values


@given(_field_values(), st.data())
def test_a_value_out_of_its_field_is_an_encode_error_naming_it(
        case: tuple[int, dict[str, int]], data: st.DataObject) -> None:
    ftype, wire = case
    fmt = FORMATS[ftype]
    names = list(wire)
    name = data.draw(st.sampled_from(names))
    low = BYTE_ADDRESS_LOW_BITS.get(name, 0)
    values = [v << BYTE_ADDRESS_LOW_BITS.get(n, 0) for n, v in wire.items()]
    bad = data.draw(st.sampled_from(
        [-1, (fmt.field(name).max_value + 1) << low, 2.0, "1"] + ([1] if low else [])))
    values[names.index(name)] = bad
    with pytest.raises(EncodeError) as encoded:
        field_code.ENCODE_BY_FTYPE[ftype](**dict(zip(names, values, strict=True)))
    assert encoded.value.field == name


def test_encoders_take_keywords_only() -> None:
    with pytest.raises(TypeError):
        field_code.encode_flow_control(1, 2, 3, 4)  # type: ignore[misc]
