"""Public Hypothesis strategies for fuzzing UALink-style encoders and decoders.

Hypothesis is a test dependency (the ``test`` extra); this module imports it,
and nothing in the core package imports this module. Users point these
strategies at their own implementation (see ``specs/strategies.md``)::

    from hypothesis import given
    from ualink_ref.testing.strategies import format_values, mutations
    from ualink_ref.capture.format import PSEUDO_HEADER

    @given(format_values(PSEUDO_HEADER))
    def test_my_encoder(values):
        assert my_encode(values) == PSEUDO_HEADER.pack(values)

Generic strategies work on any :class:`~ualink_ref.bitfields.BitFormat`:

* :func:`format_values` / :func:`format_bytes` — valid field values / bytes;
* :func:`reserved_bits_set`, :func:`unknown_enum_values` — bytes a strict
  decoder must reject;
* :func:`bit_flips`, :func:`truncations`, :func:`extensions`,
  :func:`wrong_lengths`, :func:`mutations` — malformed variants of valid
  inputs, each as a :class:`Mutation` that remembers the original.

Per-layer strategies build valid values of the model's own types:

* :func:`dl_messages`, :func:`dl_flits` (``DLFlit`` values; ``.encode()`` for bytes);
* :func:`tl_fields`, :func:`tl_control_halves`, :func:`tl_flits`;
* :func:`requests` (UPLI operations as ``ualink_ref.sim.link_run.Op``), :func:`workloads`;
* :func:`capture_records`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from ualink_ref.bitfields import BitFormat, Field
from ualink_ref.capture.format import DIRECTIONS, FEC_MODES, CaptureRecord
from ualink_ref.dl import formats as F
from ualink_ref.dl import messages as M
from ualink_ref.dl.flit import SEGMENTS, DLFlit, capacity
from ualink_ref.dl.formats import FlitOp
from ualink_ref.sim.workloads import Op
from ualink_ref.sizes import DL_FLIT_BYTES, TL_FLIT_BYTES, WIRE_BYTES_PER_FLIT
from ualink_ref.tl.fields import FORMATS, SECTORS, FType
from ualink_ref.tl.flit import decode_control_half, encode_control_half
from ualink_ref.tl.upli import AtomicOp, Command

__all__ = [
    "Mutation",
    "bit_flips",
    "capture_records",
    "dl_flits",
    "dl_messages",
    "extensions",
    "field_values",
    "format_bytes",
    "format_values",
    "known_dl_messages",
    "mutations",
    "requests",
    "reserved_bits_set",
    "tl_control_halves",
    "tl_fields",
    "tl_flits",
    "tl_stream_halves",
    "truncations",
    "unknown_enum_values",
    "workloads",
    "wrong_lengths",
]


@dataclass(frozen=True)
class Mutation:
    """A malformed input derived from a valid one.

    ``kind`` is ``"bit_flip"``, ``"truncate"`` or ``"extend"``; ``detail``
    says how (the flipped bit positions, counted from the first bit of
    ``original`` MSB first, or the new length).
    """

    original: bytes
    data: bytes
    kind: str
    detail: tuple[int, ...]


def field_values(field: Field, *, valid_only: bool = True) -> st.SearchStrategy[int]:
    """Values of one field: named values of a strict enum, zero for a reserved field.

    With ``valid_only=False`` every value the width can hold is drawn,
    including non-zero reserved and unnamed strict-enum values.
    """
    if valid_only and field.reserved:
        return st.just(0)
    if valid_only and field.strict_enum and field.enum:
        return st.sampled_from(sorted(field.enum))
    full = st.integers(0, field.max_value)
    if field.enum:
        # Bias towards the named values: they are the interesting ones.
        return st.one_of(st.sampled_from(sorted(field.enum)), full)
    edges = sorted({0, 1 if field.max_value else 0, field.max_value})
    return st.one_of(st.sampled_from(edges), full)


def format_values(
    fmt: BitFormat,
    *,
    valid_only: bool = True,
    fixed: Mapping[str, int] | None = None,
) -> st.SearchStrategy[dict[str, int]]:
    """``{field: value}`` dicts for ``fmt`` that ``fmt.pack`` accepts.

    ``fixed`` pins some fields (e.g. an opcode) to given values. With
    ``valid_only=False`` reserved and strict-enum fields range over every
    value (``pack`` then may refuse them; use with ``fmt.to_int`` checks off).
    """
    pinned = dict(fixed or {})
    parts = {
        f.name: (
            st.just(pinned[f.name]) if f.name in pinned else field_values(f, valid_only=valid_only)
        )
        for f in fmt.fields
    }
    return st.fixed_dictionaries(parts)


def format_bytes(
    fmt: BitFormat, *, fixed: Mapping[str, int] | None = None
) -> st.SearchStrategy[bytes]:
    """Valid encodings of ``fmt``: bytes that ``fmt.unpack`` accepts."""
    return format_values(fmt, fixed=fixed).map(lambda v: fmt.pack(v))


def _raw_bytes(fmt: BitFormat, values: Mapping[str, int]) -> bytes:
    """Pack without the encoder's checks: reserved and enum rules bypassed."""
    word = 0
    for pos in fmt.positions:
        word |= (values[pos.field.name] & pos.field.max_value) << pos.shift
    return word.to_bytes(fmt.byte_length, "big")


def _one_field_off(
    fmt: BitFormat, targets: list[Field], bad: Callable[[Field], st.SearchStrategy[int]]
) -> st.SearchStrategy[bytes]:
    """Valid encodings of ``fmt`` except that one field of ``targets`` holds a ``bad`` value."""

    @st.composite
    def build(draw: Any) -> bytes:
        values = draw(format_values(fmt))
        target = draw(st.sampled_from(targets))
        values[target.name] = draw(bad(target))
        return _raw_bytes(fmt, values)

    return build()


def reserved_bits_set(fmt: BitFormat) -> st.SearchStrategy[bytes]:
    """Encodings of ``fmt`` that are valid except that a reserved field is non-zero.

    A decoder of a format with ``check_reserved=True`` must reject every one.
    Raises ``ValueError`` at once if ``fmt`` has no reserved field.
    """
    reserved = [f for f in fmt.fields if f.reserved]
    if not reserved:
        raise ValueError(f"format {fmt.name!r} has no reserved field")
    return _one_field_off(fmt, reserved, lambda f: st.integers(1, f.max_value))


def _unnamed_value(field: Field) -> st.SearchStrategy[int]:
    named = field.enum or {}
    return st.integers(0, field.max_value).filter(lambda v: v not in named)


def unknown_enum_values(fmt: BitFormat) -> st.SearchStrategy[bytes]:
    """Encodings of ``fmt`` where one strict-enum field holds an unnamed value.

    Raises ``ValueError`` if ``fmt`` has no strict enum with unnamed values.
    """
    targets = [
        f for f in fmt.fields
        if f.strict_enum and f.enum is not None and len(f.enum) <= f.max_value
    ]
    if not targets:
        raise ValueError(f"format {fmt.name!r} has no strict enum with unnamed values")
    return _one_field_off(fmt, targets, _unnamed_value)


def _source(source: st.SearchStrategy[bytes] | bytes) -> st.SearchStrategy[bytes]:
    return st.just(bytes(source)) if isinstance(source, bytes | bytearray) else source


def bit_flips(
    source: st.SearchStrategy[bytes] | bytes, *, min_flips: int = 1, max_flips: int = 1
) -> st.SearchStrategy[Mutation]:
    """``source`` with between ``min_flips`` and ``max_flips`` distinct bits inverted."""
    if not 1 <= min_flips <= max_flips:
        raise ValueError("need 1 <= min_flips <= max_flips")

    @st.composite
    def build(draw: Any) -> Mutation:
        original = draw(_source(source).filter(lambda b: len(b) * 8 >= min_flips))
        nbits = len(original) * 8
        positions = draw(
            st.lists(st.integers(0, nbits - 1), min_size=min_flips,
                     max_size=min(max_flips, nbits), unique=True)
        )
        word = int.from_bytes(original, "big")
        for p in positions:
            word ^= 1 << (nbits - 1 - p)
        return Mutation(original, word.to_bytes(len(original), "big"), "bit_flip",
                        tuple(sorted(positions)))

    return build()


def truncations(source: st.SearchStrategy[bytes] | bytes) -> st.SearchStrategy[Mutation]:
    """``source`` cut short: every proper prefix, including the empty one."""

    @st.composite
    def build(draw: Any) -> Mutation:
        original = draw(_source(source).filter(len))
        keep = draw(st.integers(0, len(original) - 1))
        return Mutation(original, original[:keep], "truncate", (keep,))

    return build()


def extensions(
    source: st.SearchStrategy[bytes] | bytes, *, max_extra: int = 64
) -> st.SearchStrategy[Mutation]:
    """``source`` with 1..``max_extra`` arbitrary bytes appended."""

    @st.composite
    def build(draw: Any) -> Mutation:
        original = draw(_source(source))
        extra = draw(st.binary(min_size=1, max_size=max_extra))
        return Mutation(original, original + extra, "extend", (len(original) + len(extra),))

    return build()


def wrong_lengths(length: int, *, max_size: int | None = None) -> st.SearchStrategy[bytes]:
    """Arbitrary bytes of any length except ``length`` (up to ``max_size``, default 2x+8)."""
    limit = 2 * length + 8 if max_size is None else max_size
    return st.binary(max_size=limit).filter(lambda b: len(b) != length)


def mutations(
    source: st.SearchStrategy[bytes] | bytes, *, max_flips: int = 3
) -> st.SearchStrategy[Mutation]:
    """Any malformation of ``source``: bit flips, truncation or extension."""
    return st.one_of(
        bit_flips(source, max_flips=max_flips), truncations(source), extensions(source)
    )


def capture_records(
    *, kinds: tuple[str, ...] = ("dl_flit", "fec_codewords")
) -> st.SearchStrategy[Any]:
    """Valid :class:`~ualink_ref.capture.format.CaptureRecord` values (arbitrary flit bytes)."""

    @st.composite
    def build(draw: Any) -> CaptureRecord:
        kind = draw(st.sampled_from(kinds))
        fec = draw(st.sampled_from(sorted(FEC_MODES.values())))
        if kind == "dl_flit":
            size = DL_FLIT_BYTES
        else:
            size = WIRE_BYTES_PER_FLIT[fec] * draw(st.sampled_from([1, 2, 4]))
        return CaptureRecord(
            data=draw(st.binary(min_size=size, max_size=size)),
            kind=kind,
            direction=draw(st.sampled_from(sorted(DIRECTIONS.values()))),
            fec_mode=fec,
            port=draw(st.integers(0, 255)),
            lane=draw(st.integers(0, 255)),
            interleave=draw(st.sampled_from([1, 2, 4])),
            symbols_corrected=draw(st.integers(0, 0xFFFF)),
            uncorrectable=draw(st.booleans()),
            slot=draw(st.integers(0, 2**32 - 1)),
            timestamp_ns=draw(st.integers(0, 2**32 * 10**9 - 1)),  # fits pcap and pcapng
        )

    return build()


# -- data link layer --------------------------------------------------------------



def known_dl_messages() -> st.SearchStrategy[M.DLMessage]:
    """Any DL message this model knows (no ``UnknownMessage``)."""
    return st.one_of(
        st.just(M.NoOp()),
        st.builds(M.TLRateNotification, st.integers(0, 255)),
        st.builds(M.DeviceId, st.booleans(), st.integers(0, 0xFFFF)),
        st.builds(M.PortNumber, st.booleans(), st.integers(0, 255)),
        st.builds(M.ChannelNegotiation, st.sampled_from(M.ChannelCommand)),
        st.builds(M.UartData, st.binary(max_size=2)),
        st.builds(M.VendorMessage, st.integers(0, 7), st.integers(0, (1 << 23) - 1)),
    )


@st.composite
def _dl_flits(draw: st.DrawFn, payload: bool | None = None) -> DLFlit:
    """Any valid :class:`DLFlit`: every op, full / partial / tail-only / empty TL bytes."""
    messages = tuple(draw(st.lists(st.none() | st.integers(0, 0xFFFFFFFF),
                                   min_size=SEGMENTS, max_size=SEGMENTS)))
    cap = capacity(messages)
    has_tl = draw(st.booleans()) if payload is None else payload
    if has_tl:
        first = 4 * draw(st.integers(0, 15))
        whole = (cap - first) // TL_FLIT_BYTES  # TL flits that fit after the first boundary
        length = draw(st.sampled_from([cap, first + TL_FLIT_BYTES * draw(st.integers(0, whole))]))
        if length == 0:
            length = cap
        tl = draw(st.binary(min_size=length, max_size=length))
        op = draw(st.sampled_from(FlitOp))
    else:
        first, tl = 0, b""
        op = draw(st.sampled_from([FlitOp.EXPLICIT, FlitOp.ACK, FlitOp.REPLAY_REQUEST]))
    if op.is_command:
        low = 1 if op is FlitOp.REPLAY_REQUEST else 0
        return DLFlit(op, ack_req_seq=draw(st.integers(low, 511)),
                      flit_seq_lo=draw(st.integers(0, 7)) if tl else 0, tl=tl,
                      first_tl_start=first, messages=messages)
    return DLFlit(op, flit_seq=draw(st.integers(1, 511)) if tl else 0, tl=tl,
                  first_tl_start=first, messages=messages)



def dl_messages() -> st.SearchStrategy[Any]:
    """DL message values: every known type (:func:`known_dl_messages`) and unknown words."""

    def unknown(values: dict[str, int]) -> Any:
        return M.UnknownMessage(F.DL_MESSAGE.to_int(values))

    known = {(f.field("mclass").default, f.field("mtype").default)
             for f in (F.NOOP_MESSAGE, F.TL_RATE_MESSAGE, F.DEVICE_ID_MESSAGE,
                       F.PORT_NUMBER_MESSAGE, F.CHANNEL_NEGOTIATION_MESSAGE, F.UART_MESSAGE)}
    return st.one_of(
        known_dl_messages(),
        format_values(F.DL_MESSAGE)
        .filter(lambda v: v["compressed"] or (
            (v["mclass"], v["mtype"]) not in known and v["mclass"] != F.MessageClass.VENDOR))
        .map(unknown),
    )


def dl_flits(*, payload: bool | None = None) -> st.SearchStrategy[Any]:
    """Valid :class:`ualink_ref.dl.DLFlit` values: every op, sequence fields, TL bytes at
    every legal length and phase, message words in any segment . ``payload`` forces (``True``) or
    forbids (``False``) TL bytes."""
    return _dl_flits(payload=payload)


# -- transaction layer --------------------------------------------------------------


def tl_fields(
    *, ftypes: tuple[int, ...] | None = None
) -> st.SearchStrategy[tuple[int, dict[str, int]]]:
    """``(ftype, values)`` of TL control fields (requests use modelled commands only)."""

    chosen = sorted(FORMATS) if ftypes is None else list(ftypes)
    cmds = [int(c) for c in Command]

    def one(ft: int) -> st.SearchStrategy[tuple[int, dict[str, int]]]:
        fixed: dict[str, int] = {"ftype": ft}
        strategy = format_values(FORMATS[ft], fixed=fixed)
        if ft in (FType.REQUEST, FType.COMPRESSED_REQUEST):
            strategy = st.tuples(strategy, st.sampled_from(cmds)).map(
                lambda vc: {**vc[0], "cmd": vc[1]})
        return strategy.map(lambda v: (ft, v))

    return st.one_of(*(one(ft) for ft in chosen))


def tl_control_halves() -> st.SearchStrategy[bytes]:
    """32-byte control half-flits: TL fields packed in order, zero padded."""

    any_field = tl_fields()

    @st.composite
    def build(draw: Any) -> bytes:
        fields: list[tuple[int, dict[str, int]]] = []
        used = 0
        for _ in range(draw(st.integers(0, 8))):
            ft, values = draw(any_field)
            if used + SECTORS[ft] > 8:
                break
            fields.append((ft, values))
            used += SECTORS[ft]
        return encode_control_half(fields)

    return build()


def _sectors(words: list[tuple[int, int]]) -> bytes:
    return b"".join((ftype << 28 | low).to_bytes(4, "big") for ftype, low in words)


def tl_stream_halves() -> st.SearchStrategy[bytes]:
    """32-byte half-flits for TL streams that also go wrong: valid control half-flits (with
    data owed after them), eight sectors of mostly known FTYPEs (7 and up: unknown) with any
    low bits, and arbitrary bytes."""
    return st.one_of(
        tl_control_halves(),
        st.lists(st.tuples(st.integers(0, 8), st.integers(0, 2**28 - 1)),
                 min_size=8, max_size=8).map(_sectors),
        st.binary(min_size=32, max_size=32),
    )


def tl_flits() -> st.SearchStrategy[bytes]:
    """64-byte TL flits that dissect with no earlier state (start with a control half)."""

    control = tl_control_halves()

    @st.composite
    def build(draw: Any) -> bytes:
        first: bytes = draw(control)
        owed = sum(f.data_halves for f in decode_control_half(first))
        second: bytes = (draw(st.binary(min_size=32, max_size=32)) if owed
                         else draw(control))
        return first + second

    return build()


def requests(*, side: str | None = None) -> st.SearchStrategy[Any]:
    """Legal UPLI operations as ``ualink_ref.sim.link_run.Op`` (what
    :func:`ualink_ref.sim.link_run.simulate` and ``CaptureLink.run`` take): Read, Write with a
    byte-enable mask, WriteFull and every atomic op and size, each inside one 256-byte
    region, from side ``"a"`` or ``"b"``."""

    sides = st.sampled_from("ab") if side is None else st.just(side)

    @st.composite
    def build(draw: Any) -> Op:
        who = draw(sides)
        kind = draw(st.sampled_from(["read", "write", "write_full", "atomic"]))
        region = 0x100 * draw(st.integers(0, 0xFFFF))
        if kind == "atomic":
            op = draw(st.sampled_from(list(AtomicOp)))
            size = draw(st.sampled_from([4, 8]))
            addr = region + size * draw(st.integers(0, 256 // size - 1))
            top = (1 << 8 * size) - 1
            compare = draw(st.integers(0, top)) if op is AtomicOp.CAS else None
            return Op(who, "atomic", addr, atomic_op=int(op), operand=draw(st.integers(0, top)),
                      compare=compare, size=size, fetch=draw(st.booleans()))
        length = 4 * draw(st.integers(1, 64))
        addr = region + 4 * draw(st.integers(0, (256 - length) // 4))
        if kind == "read":
            return Op(who, "read", addr, length=length)
        data = draw(st.binary(min_size=length, max_size=length))
        mask = draw(st.integers(0, (1 << length) - 1)) if kind == "write" else None
        return Op(who, "write", addr, data=data, byte_enable=mask)

    return build()


def workloads(*, max_ops: int = 20) -> st.SearchStrategy[list[Any]]:
    """Lists of :func:`requests` from both ends: a workload for ``simulate``."""
    return st.lists(requests(), min_size=1, max_size=max_ops)
