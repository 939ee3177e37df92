"""Generate :mod:`ualink_ref.tl.field_code`: straight-line pack and unpack functions of
every TL control field layout, written from the declarations in :mod:`ualink_ref.tl.fields`.

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

_HEADER = '''"""Encode, pack and unpack functions of each TL control field layout: GENERATED.

Do not edit: written by ``python -m ualink_ref.tl.field_code_gen`` from the declarations
in :mod:`ualink_ref.tl.fields` (``tests/tl/test_tl_field_code.py`` checks it is current).

* ``encode_*`` takes the field values as keywords (no two can be swapped) and returns
  the field's bytes: what the engines call to send a field;
* ``pack_*`` does the same for a typed value of :mod:`ualink_ref.tl.codec` (its
  values in declaration order, without ``ftype``);
* ``unpack_*`` returns the values of a field's bits, in declaration order.

A value that does not fit its field, or is not an integer, is an
:class:`~ualink_ref.errors.EncodeError` naming the field. Byte-address fields take
and give byte addresses (the wire leaves out their two low bits, which must be zero).
"""

from __future__ import annotations

from collections.abc import Callable

from ualink_ref.errors import EncodeError


def _misfit(layout: str, fields: tuple[tuple[str, object, int, int], ...]) -> EncodeError:
    """The error naming the first of ``fields`` ``(name, value, largest, low bits that
    must be zero)`` that does not fit."""
    for name, value, largest, low in fields:
        if (not isinstance(value, int) or not 0 <= value <= largest
                or value & ((1 << low) - 1)):
            return EncodeError(f"{layout}.{name} = {value!r} does not fit", field=name)
    return EncodeError(f"{layout} does not fit its layout")'''


def _function_stem(fmt: BitFormat) -> str:
    return fmt.name.removeprefix("tl_")


def _body(fmt: BitFormat, ftype: int, layout: str) -> list[str]:
    """The checked packing of one layout's values (held in variables named as its fields)."""
    names = [f.name for f in fmt.fields if f.name != "ftype"]
    checks = []
    terms = [f"{ftype} << {fmt.position('ftype').shift}  # ftype"]
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
        f'            ).to_bytes({fmt.byte_length}, "big")',
        "    except TypeError:  # a value that is not an integer: named below",
        "        pass",
        f'    raise _misfit("{layout}", (',
        *(f"        {m}," for m in misfit),
        "    ))",
    ]


def _encode(fmt: BitFormat, ftype: int, cls: type[Any]) -> str:
    names = [f.name for f in fmt.fields if f.name != "ftype"]
    defaults: dict[str, Any] = cls._field_defaults
    params = ", ".join(f"{n}: int = {defaults[n]}" if n in defaults else f"{n}: int"
                       for n in names)
    stem = _function_stem(fmt)
    head = f"def encode_{stem}(*, {params}) -> bytes:"
    if len(head) > 100:
        head = f"def encode_{stem}(\n    *,\n" + "".join(
            f"    {p},\n" for p in params.split(", ")) + ") -> bytes:"
    return "\n".join([
        head,
        f'    """{fmt.name} (FTYPE {ftype}, {fmt.byte_length} bytes) from its field values."""',
        *_body(fmt, ftype, cls.__name__),
    ])


def _pack(fmt: BitFormat, ftype: int, cls: type[Any]) -> str:
    names = [f.name for f in fmt.fields if f.name != "ftype"]
    unpacked = _lines(names, 8, ",") if len(names) > 6 else ", ".join(names)
    stem = _function_stem(fmt)
    return "\n".join([
        f"def pack_{stem}(value: tuple[int, ...]) -> bytes:",
        f'    """A typed {cls.__name__} (its values in declaration order) as its bytes."""',
        (f"    ({unpacked}) = value" if len(names) > 6
         else f"    {unpacked}{',' if len(names) == 1 else ''} = value"),
        *_body(fmt, ftype, cls.__name__),
    ])


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


def _lines(names: list[str], indent: int, sep: str, width: int = 96) -> str:
    """``names`` joined by ``sep`` and broken into lines of at most ``width`` columns."""
    lines: list[str] = []
    line = ""
    for name in names:
        piece = f"{name}{sep}"
        if line and len(line) + 1 + len(piece) + indent > width:
            lines.append(line)
            line = piece
        else:
            line = f"{line} {piece}" if line else piece
    lines.append(line)
    return "\n" + " " * indent + ("\n" + " " * indent).join(lines) + "\n    "


def render() -> str:
    """The source of :mod:`ualink_ref.tl.field_code`."""
    blocks = [_HEADER]
    for ftype, fmt in sorted(FORMATS.items()):
        cls = CLASSES[FType(ftype)]
        blocks.append(_encode(fmt, ftype, cls))
        blocks.append(_pack(fmt, ftype, cls))
        blocks.append(_unpack(fmt, ftype))
    table = "\n".join(f"    {ftype}: pack_{_function_stem(fmt)},  # {FType(ftype).name}"
                      for ftype, fmt in sorted(FORMATS.items()))
    untable = "\n".join(f"    {ftype}: unpack_{_function_stem(fmt)},"
                        for ftype, fmt in sorted(FORMATS.items()))
    blocks.append("#: FTYPE -> the pack function of its layout.\n"
                  "PACK_BY_FTYPE: dict[int, Callable[[tuple[int, ...]], bytes]] = {\n"
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
