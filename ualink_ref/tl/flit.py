"""64-byte TL flits: two 32-byte half-flits, each control or data.

How a receiver tells them apart (project choice, ``specs/tl.md``):

* The half-flit stream is parsed in order. A *control* half-flit is 8
  sectors of fields, each field starting with its FTYPE and lying wholly
  inside the half-flit; unused sectors are zero (a zero sector is a NOP
  flow-control field). A field never straddles two half-flits.
* Every field that carries data is followed, in field order, by its *data*
  half-flits, immediately after the control half-flit that holds it: a Write
  (0x28) has one byte-enable half-flit then 2 per beat; WriteFull, Write
  Message and atomics 2 per beat; a response 2 per beat when it is read-type
  (``rd_wr`` = 0) with status OKAY, or is FTYPE 4. The count is known from
  the control half-flit alone.
* After those data half-flits, the next half-flit is control again.

So the only state a receiver keeps between TL flits is how many data
half-flits are still owed — :func:`dissect` takes it as ``pending`` (0 at
link start) and returns the new value. A TL flit that starts with a control
half-flit (``pending`` = 0, which is every flit that does not continue a
multi-beat payload) dissects with no earlier state at all.

The walk itself is :class:`ualink_ref.tl.framing.TLDeframer` (the one
implementation of these rules, shared with the TL engine and the Scapy
view); this module renders what it finds field by field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ualink_ref.bitfields import BitFormat
from ualink_ref.errors import DecodeError, EncodeError, TruncatedError
from ualink_ref.sizes import TL_FLIT_BYTES, TL_HALF_BYTES
from ualink_ref.tl import codec as C
from ualink_ref.tl.fields import FLOW_CONTROL, SECTOR_BYTES, FType, encode_field
from ualink_ref.tl.framing import TLDeframer, data_halves

HALF_FLIT_BYTES = TL_HALF_BYTES
SECTORS_PER_HALF = HALF_FLIT_BYTES // SECTOR_BYTES
ZERO_HALF = bytes(HALF_FLIT_BYTES)
_NOP_VALUES = {f.name: 0 for f in FLOW_CONTROL.fields}


def data_halves_of(ftype: int, values: Mapping[str, int]) -> int:
    """Data half-flits that follow a control field given as the readable codec's dict
    (:func:`ualink_ref.tl.framing.data_halves`, the one rule)."""
    return data_halves(C.from_dict(ftype, values))


@dataclass(frozen=True)
class ControlField:
    """One decoded control field: where it sits, its layout and values."""

    sector: int
    format: BitFormat
    values: Mapping[str, int]
    data_halves: int

    @property
    def ftype(self) -> int:
        """The field's FTYPE."""
        return self.values["ftype"]

    @property
    def is_nop(self) -> bool:
        """True for an all-zero flow-control sector (padding)."""
        return self.ftype == FType.FLOW_CONTROL and not any(
            v for k, v in self.values.items() if k != "ftype"
        )

    def describe(self) -> str:
        """One-line rendering with enum names."""
        return f"s{self.sector}:" + self.format.describe(self.values)


@dataclass(frozen=True)
class HalfFlit:
    """One 32-byte half-flit: ``kind`` is ``"control"`` or ``"data"``."""

    kind: str
    raw: bytes
    fields: tuple[ControlField, ...] = field(default=())

    def describe(self) -> str:
        """One-line rendering (NOP sectors omitted)."""
        if self.kind == "data":
            return "data[" + self.raw.hex() + "]"
        shown = [f.describe() for f in self.fields if not f.is_nop]
        return "control[" + (" ".join(shown) or "NOP") + "]"


@dataclass(frozen=True)
class TLFlitView:
    """A dissected TL flit and the data half-flits still owed after it."""

    halves: tuple[HalfFlit, HalfFlit]
    pending_after: int

    def describe(self) -> str:
        """Two-line rendering, one line per half-flit."""
        return "\n".join(f"half{i}: {h.describe()}" for i, h in enumerate(self.halves))


def encode_control_half(fields: Sequence[tuple[int, Mapping[str, int]]]) -> bytes:
    """Pack ``(ftype, values)`` fields in order into one control half-flit (zero padded)."""
    out = b"".join(encode_field(ftype, values) for ftype, values in fields)
    if len(out) > HALF_FLIT_BYTES:
        raise EncodeError(f"control fields take {len(out) // SECTOR_BYTES} sectors, max 8")
    return out + bytes(HALF_FLIT_BYTES - len(out))


def decode_control_half(half: bytes | bytearray | memoryview) -> tuple[ControlField, ...]:
    """Decode every field of one control half-flit (NOP sectors included)."""
    return _control_fields(C.decode_control_half(half))


def _control_fields(decoded: list[tuple[int, C.TLField]]) -> tuple[ControlField, ...]:
    """The readable view of typed fields, with the trailing NOP sectors filled in."""
    fields = [ControlField(sector, C.format_of(value), C.as_dict(value), data_halves(value))
              for sector, value in decoded]
    used = decoded[-1][0] + C.SECTORS_OF[C.FTYPE_OF[type(decoded[-1][1])]] if decoded else 0
    fields += [ControlField(s, FLOW_CONTROL, dict(_NOP_VALUES), 0)
               for s in range(used, SECTORS_PER_HALF)]
    return tuple(fields)


def dissect(flit: bytes | bytearray | memoryview, pending: int = 0) -> TLFlitView:
    """Dissect one 64-byte TL flit; ``pending`` data half-flits are owed from before.

    Raises only :class:`~ualink_ref.errors.DecodeError` subclasses on bad input.
    """
    if not isinstance(flit, bytes | bytearray | memoryview):
        raise TruncatedError("TL flit", TL_FLIT_BYTES, -1)
    if len(flit) != TL_FLIT_BYTES:
        raise TruncatedError("TL flit", TL_FLIT_BYTES, len(flit))
    if not isinstance(pending, int) or pending < 0:
        raise DecodeError(f"pending data half-flits must be >= 0, got {pending!r}")
    walk = TLDeframer(pending)
    halves: list[HalfFlit] = []
    for i in range(2):
        raw = bytes(flit[i * HALF_FLIT_BYTES : (i + 1) * HALF_FLIT_BYTES])
        if walk.next_is_data():
            walk.feed_half(raw)
            halves.append(HalfFlit("data", raw))
        else:
            started, _done = walk.feed_half(raw)
            decoded = [(p.sector, p.value) for p in started if p.value is not None]
            halves.append(HalfFlit("control", raw, _control_fields(decoded)))
    return TLFlitView((halves[0], halves[1]), walk.pending)


def dissect_stream(flits: Iterable[bytes]) -> list[TLFlitView]:
    """Dissect consecutive TL flits from link start, carrying the pending count."""
    views = []
    pending = 0
    for flit in flits:
        view = dissect(flit, pending)
        pending = view.pending_after
        views.append(view)
    return views


def view_to_json(view: TLFlitView) -> list[dict[str, Any]]:
    """A JSON-ready rendering of a dissected flit (used by the vectors)."""
    out: list[dict[str, Any]] = []
    for half in view.halves:
        if half.kind == "data":
            out.append({"kind": "data", "hex": half.raw.hex()})
        else:
            out.append(
                {
                    "kind": "control",
                    "fields": [
                        {"sector": f.sector, "format": f.format.name, **dict(f.values)}
                        for f in half.fields
                        if not f.is_nop
                    ],
                }
            )
    return out


__all__ = [
    "HALF_FLIT_BYTES",
    "SECTORS_PER_HALF",
    "ZERO_HALF",
    "ControlField",
    "HalfFlit",
    "TLFlitView",
    "data_halves_of",
    "decode_control_half",
    "dissect",
    "dissect_stream",
    "encode_control_half",
    "view_to_json",
]
