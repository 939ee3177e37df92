"""Generate :mod:`ualink_ref.tl.field_code`: straight-line encode and unpack functions of
every TL control field layout, written from the declarations in :mod:`ualink_ref.tl.fields`.

* ``encode_<layout>(*, field=value, ...) -> bytes`` takes the field values as keywords
  (no two can be swapped) and returns the field's bytes; a value that does not fit its
  field, or is not an integer, is an :class:`~ualink_ref.errors.EncodeError` naming the
  field (:func:`ualink_ref.tl.fields.misfit`). Byte-address fields take byte addresses
  (the wire leaves out their two low bits, which must be zero). A reserved field
  (``spare``) is carried as given, as the typed values carry it; the receive rules
  judge it.
* ``unpack_<layout>(word) -> tuple`` returns the values of a field's bits in
  declaration order (byte addresses at byte scale).

The codec's hot path (``pack_field`` / ``unpack_word``) is a handful of shifts and
masks per field; as a loop over a layout's fields it took most of an operation's
time. Generated once into a committed module (as the Wireshark dissector is) it is
straight-line code that holds nothing but the declaration's numbers, and
``tests/tl/test_tl_field_code.py`` checks that the module is what this generator
writes today and that it agrees bit for bit with ``BitFormat.pack`` / ``unpack``.

Run ``python -m ualink_ref.tl.field_code_gen`` after changing a layout.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ualink_ref.bitfields import BitFormat
from ualink_ref.tl.codec import CLASSES
from ualink_ref.tl.fields import BYTE_ADDRESS_LOW_BITS, FORMATS, FType

#: Where the generated module lives.
TARGET = Path(__file__).with_name("field_code.py")

_HEADER = '''"""Encode and unpack functions of each TL control field layout: GENERATED, do not edit.

Written by ``python -m ualink_ref.tl.field_code_gen`` from :mod:`ualink_ref.tl.fields`;
its module docstring says what each function does.
"""

from __future__ import annotations

from collections.abc import Callable

from ualink_ref.tl.fields import misfit'''


def _function_stem(fmt: BitFormat) -> str:
    return fmt.name.removeprefix("tl_")


def _spec(fmt: BitFormat) -> tuple[object, ...]:
    """What makes two layouts pack alike: every field but ``ftype``, where it sits."""
    return (fmt.byte_length, fmt.position("ftype").shift, tuple(
        (f.name, fmt.position(f.name).shift, f.max_value) for f in fmt.fields
        if f.name != "ftype"))


def _checked_word(fmt: BitFormat, ftype_term: str, layout: str) -> list[str]:
    """The checked word of one layout's values (held in variables named as its fields),
    returned as ``return (<ftype_term> | fields...)``; a misfit raises naming ``layout``."""
    names = [f.name for f in fmt.fields if f.name != "ftype"]
    checks = []
    terms = [ftype_term]
    misfit = []
    for name in names:
        low = BYTE_ADDRESS_LOW_BITS.get(name, 0)
        largest = fmt.field(name).max_value << low
        check = f"0 <= {name} <= {largest:#x}"
        checks.append(f"{check} and not {name} & {(1 << low) - 1}" if low else check)
        shift = fmt.position(name).shift
        value = f"({name} >> {low})" if low else name
        terms.append(f"{value} << {shift}" if shift else value)
        misfit.append(f'("{name}", {name}, {largest:#x}, {low})')
    return [
        "    try:",
        "        if (",
        "            " + "\n            and ".join(checks),
        "        ):",
        "            return (",
        "                " + "\n                | ".join(terms),
        "            )",
        "    except TypeError:  # a value that is not an integer: named below",
        "        pass",
        f"    raise misfit({layout}, (",
        *(f"        {m}," for m in misfit),
        "    ))",
    ]


def _params(fmt: BitFormat, cls: type[Any], stem: str, prefix: str, returns: str) -> str:
    names = [f.name for f in fmt.fields if f.name != "ftype"]
    defaults: dict[str, Any] = cls._field_defaults
    params = [f"{n}: int = {defaults[n]}" if n in defaults else f"{n}: int" for n in names]
    head = f"def {prefix}{stem}(*, {', '.join(params)}) -> {returns}:"
    if len(head) <= 100:
        return head
    return f"def {prefix}{stem}(\n    *,\n" + "".join(f"    {p},\n" for p in params) + (
        f") -> {returns}:")


def _encode(fmt: BitFormat, ftype: int, cls: type[Any]) -> str:
    stem = _function_stem(fmt)
    doc = f'    """{fmt.name} (FTYPE {ftype}, {fmt.byte_length} bytes) from its field values."""'
    ftype_term = f"{ftype} << {fmt.position('ftype').shift}"
    body = _checked_word(fmt, f"{ftype_term}  # ftype", f'"{cls.__name__}"')
    body[6] = f'            ).to_bytes({fmt.byte_length}, "big")'
    return "\n".join([_params(fmt, cls, stem, "encode_", "bytes"), doc, *body])


def _unpack(fmt: BitFormat, ftype: int) -> str:
    parts = []
    for f in fmt.fields:
        if f.name == "ftype":
            continue
        low = BYTE_ADDRESS_LOW_BITS.get(f.name, 0)
        shift = fmt.position(f.name).shift
        bits = f"word >> {shift} & {f.max_value:#x}" if shift else f"word & {f.max_value:#x}"
        parts.append(f"({bits}) << {low},  # {f.name}" if low else f"{bits},  # {f.name}")
    stem = _function_stem(fmt)
    return "\n".join([
        f"def unpack_{stem}(word: int) -> tuple[int, ...]:",
        f'    """The values of a {fmt.name} (FTYPE {ftype}) whose bits are ``word``."""',
        "    return (",
        *(f"        {part}" for part in parts),
        "    )",
    ])


def render() -> str:
    """The source of :mod:`ualink_ref.tl.field_code`."""
    blocks = [_HEADER]
    first_of: dict[tuple[object, ...], int] = {}  # a layout's spec -> its first FTYPE
    for ftype, fmt in sorted(FORMATS.items()):
        first_of.setdefault(_spec(fmt), ftype)
    for ftype, fmt in sorted(FORMATS.items()):
        # Each layout's encoder is written out whole, even where two layouts pack alike
        # (the compressed responses with and without data): one call per field packed.
        blocks.append(_encode(fmt, ftype, CLASSES[FType(ftype)]))
        first = first_of[_spec(fmt)]
        if first == ftype:
            blocks.append(_unpack(fmt, ftype))
        else:  # the same bits as the first layout that packs alike
            blocks.append(f"#: {fmt.name} unpacks as {FORMATS[first].name} does.\n"
                          f"unpack_{_function_stem(fmt)} = unpack_{_function_stem(FORMATS[first])}")
    table = "\n".join(f"    {ftype}: encode_{_function_stem(fmt)},  # {FType(ftype).name}"
                      for ftype, fmt in sorted(FORMATS.items()))
    untable = "\n".join(f"    {ftype}: unpack_{_function_stem(fmt)},"
                        for ftype, fmt in sorted(FORMATS.items()))
    blocks.append("#: FTYPE -> the encode function of its layout (field values as keywords).\n"
                  "ENCODE_BY_FTYPE: dict[int, Callable[..., bytes]] = {\n"
                  f"{table}\n}}")
    blocks.append("#: FTYPE -> the unpack function of its layout.\n"
                  "UNPACK_BY_FTYPE: dict[int, Callable[[int], tuple[int, ...]]] = {\n"
                  f"{untable}\n}}")
    return "\n\n\n".join(blocks) + "\n"


def main() -> int:
    """Write the module; print its path."""
    TARGET.write_text(render())
    print(TARGET)
    return 0


if __name__ == "__main__":
    sys.exit(main())
