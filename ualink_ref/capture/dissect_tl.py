"""The dissector's TL side: one direction's TL byte stream cut into TL flits, framed, read.

:class:`TLStream` takes the TL bytes of each accepted DL flit in order. It cuts
them into 64-byte TL flits (a TL flit that spans two DL flits completes in the
second) and frames each by the rules of :mod:`ualink_ref.tl.framing` (a half-flit
is data while data half-flits are owed; a control half-flit's fields say, by
:func:`~ualink_ref.tl.framing.data_halves`, how many are owed next: the only
state carried is that count). Framing reads only the bits rule 3 reads of each
field (:func:`owed_after`); the control half-flits of the TL flits that framed are
kept, and their typed fields (:func:`ualink_ref.tl.codec.decode_control_half`)
read from them when first asked for (:func:`read_control`). It keeps the
address cache of compressed requests: a request with ``cload`` loads its
address bits above ``addr_lo`` into way ``cway``; a later compressed request
naming that way is resolved to the full address as the target sees it.

What a listing shows is built from the typed fields only when it is read:
:func:`ops_of` (requests and responses as :class:`TLOp`, their value dicts on
first use) and :func:`credits_of` (credit returns as text).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from ualink_ref.errors import DecodeError
from ualink_ref.sizes import TL_FLIT_BYTES, TL_HALF_BYTES
from ualink_ref.tl import codec as C
from ualink_ref.tl import fields as F
from ualink_ref.tl.codec import ADDR_LO_BITS
from ualink_ref.tl.fields import COMMANDS, STATUS_NAMES
from ualink_ref.tl.framing import data_halves
from ualink_ref.tl.upli import (
    POISON_ATTR_MASK,
    AtomicOp,
    atomic_op_of,
    atomic_poisoned,
    request_has_data,
)

_RESPONSES = (C.Response, C.CompressedResponseData, C.CompressedResponseNoData)

_Ways = tuple[int | None, ...]
_Owner = TypeVar("_Owner")
_Value = TypeVar("_Value")


class lazy(Generic[_Owner, _Value]):  # lower case: used like functools.cached_property
    """An attribute computed on first read and kept in the instance dict.

    ``functools.cached_property`` without its lock (Python 3.11 takes one on every
    first read, which cost more than the values here): a non-data descriptor, so
    once the value is in the instance dict it is read from there. Works on frozen
    dataclasses (the dict is written directly); the value is derived from the
    instance's own fields, so computing it twice would give the same value.
    """

    def __init__(self, compute: Callable[[_Owner], _Value]) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: Any = None) -> lazy[_Owner, _Value]: ...

    @overload
    def __get__(self, obj: _Owner, owner: Any = None) -> _Value: ...

    def __get__(self, obj: _Owner | None, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = self.compute(obj)
        obj.__dict__[self.name] = value
        return value
#: Credit-return fields, in the order a listing names them.
_CREDIT_KINDS = ("req_cmd", "rsp_cmd", "req_data", "rsp_data")


@dataclass(frozen=True)
class TLOp:
    """One request or response field found in a TL flit (for listing and filters)."""

    kind: str  # "request" or "response"
    command: str  # command name, or "Response"
    tag: int
    field: C.TLField  # the typed control field (addresses in bytes)
    #: A compressed request's address bits above ``addr_lo`` from the address cache
    #: (``None``: an uncompressed request or response, or a way not loaded in the capture).
    way: int | None = None

    @lazy
    def values(self) -> dict[str, int]:
        """The field's values as the readable codec names them (``ftype`` included, addresses
        counting 4-byte words); a compressed request whose way is known also gets the full
        ``addr``, as the target sees it. Built on first read (listing, ``--json``)."""
        v = C.as_dict(self.field)
        if self.way is not None and isinstance(self.field, C.CompressedRequest):
            v["addr"] = (self.way << ADDR_LO_BITS | self.field.addr_lo) >> 2
        return v

    @property
    def status(self) -> int:
        """A response's status (a compressed response is OKAY: 0); 0 for a request."""
        return int(getattr(self.field, "status", 0))

    @property
    def is_piece(self) -> bool:
        """A response that answers only part of its request: ``offset`` != 0 or ``last`` = 0
        (a split response, ``specs/tl.md`` rules S1-S7)."""
        return self.kind == "response" and bool(
            getattr(self.field, "offset", 0) or not getattr(self.field, "last", 1))

    @property
    def poisoned_beats(self) -> int:
        """A write request's poisoned-beat mask (``attr[3:0]``, rule P1), or 1 for an atomic
        whose operand is poisoned (``attr[0]``, rule P2); 0 otherwise."""
        if self.kind != "request" or not request_has_data(getattr(self.field, "cmd", 0)):
            return 0
        attr = int(getattr(self.field, "attr", 0))
        if self.command.startswith("Atomic"):
            return int(atomic_poisoned(attr))
        # only the beats the request carries (as the target reads it, rule P1)
        beats = int(getattr(self.field, "numbeats", 0)) + 1
        return attr & POISON_ATTR_MASK & ((1 << beats) - 1)

    def describe(self) -> str:
        """Short rendering: ``Read tag=5 addr=0x1000 64B`` or ``Response tag=5 OKAY``, with the
        error paths in words: ``poisoned beats 0x2`` / ``poisoned operand`` on a request,
        ``beats 1-1 of a split, more to come`` on a response piece."""
        v = self.values
        if self.kind == "request":
            return self._describe_request(v)
        status = STATUS_NAMES.get(v.get("status", 0), str(v.get("status")))
        text = f"Response tag={self.tag} {status}"
        if self.is_piece:
            first = v.get("offset", 0)
            more = "last piece" if v.get("last", 1) else "more to come"
            text += f" beats {first}-{first + v.get('len', 0)} of a split, {more}"
        return text

    def _describe_request(self, v: dict[str, int]) -> str:
        words = v.get("len", 0) + 1
        text = f"{self.command} tag={self.tag}"
        if "addr" in v:
            text += f" addr={v['addr'] << 2:#x}"
        else:  # compressed, address-cache way not seen in this capture
            text += f" addr_lo={v['addr_lo'] << 2:#x}(way {v['cway']} unknown)"
        poisoned = self.poisoned_beats
        if self.command.startswith("Atomic"):
            # a poisoned operand sets attr[0] (rule P2); the op is in attr[7:4] either way
            op = atomic_op_of(v.get("attr", 0) & ~1 if poisoned else v.get("attr", 0))
            if op is not None:
                text += f" op={AtomicOp(op).name}"
            text += f" {4 * words}B"
            return text + " poisoned operand" if poisoned else text
        text += f" {4 * words}B"
        return text + f" poisoned beats {poisoned:#x}" if poisoned else text


def ops_of(fields: tuple[C.TLField, ...], ways: tuple[int | None, ...]) -> tuple[TLOp, ...]:
    """The requests and responses among the reported ``fields``, in order (``ways``: see
    :func:`read_control`)."""
    ops = []
    for value, way in zip(fields, ways, strict=True):
        if isinstance(value, _REQUESTS):
            name = COMMANDS.get(value.cmd) or f"cmd{value.cmd:#04x}"
            ops.append(_op({"kind": "request", "command": name, "tag": value.tag,
                            "field": value, "way": way}))
        elif isinstance(value, _RESPONSES):
            ops.append(_op({"kind": "response", "command": "Response", "tag": value.tag,
                            "field": value}))
    return tuple(ops)


def _op(values: dict[str, Any]) -> TLOp:
    """The :class:`TLOp` whose fields are ``values`` (``way`` may be left out: ``None``).

    Built by handing it its instance dict, as ``dissect._made`` builds a flit: the frozen
    ``__init__`` sets each field with ``object.__setattr__``, several times the cost of
    the rest of listing an op. Every value is of the declared type (``ops_of``'s own).
    """
    op = _new(TLOp)
    _set(op, "__dict__", values)
    return op


_new, _set = object.__new__, object.__setattr__
_REQUESTS = (C.Request, C.CompressedRequest)


def credits_of(fields: tuple[C.TLField, ...]) -> tuple[str, ...]:
    """The credit returns among the reported ``fields`` as text: ``req_cmd+1 rsp_data+4``
    per field, prefixed ``vc<N> `` for a per-VC field."""
    out = []
    for value in fields:
        if isinstance(value, C.VcFlowControl):
            out.append(f"vc{value.vchan} " + _credit_text(value[1:]))
        elif isinstance(value, C.FlowControl):
            out.append(_credit_text(value))
    return tuple(out)


def _credit_text(counts: tuple[int, ...]) -> str:
    return " ".join(f"{k}+{n}" for k, n in zip(_CREDIT_KINDS, counts, strict=True) if n)


#: An address cache with no way loaded.
NO_WAYS: _Ways = (None, None, None, None)


def read_control(halves: tuple[bytes, ...], cache: _Ways) -> tuple[tuple[C.TLField, ...], _Ways]:
    """The fields a listing reports from the control half-flits ``halves`` (in stream order)
    and, for each, a compressed request's address bits from the address cache (else
    ``None``), the cache being ``cache`` before the first half-flit.

    Reportable: requests, responses, and flow-control fields that are not all-zero NOP
    padding. A request with ``cload`` loads way ``cway`` (so a later compressed request
    naming it in the same ``halves`` resolves to it).
    """
    ways = list(cache)
    fields: list[C.TLField] = []
    found: list[int | None] = []
    for half in halves:
        _read(half, ways, fields, found)
    return tuple(fields), tuple(found)


def _read(half: bytes, cache: list[int | None], fields: list[C.TLField],
          found: list[int | None]) -> None:
    """Add the reportable fields of control half-flit ``half`` (one that framed) to
    ``fields`` and their ways to ``found``; keep the address ``cache``."""
    for _sector, value in C.decode_control_half(half):
        cls = type(value)
        if isinstance(value, _COMPRESSED_REQUEST):
            way = cache[value.cway]
        elif isinstance(value, _REQUEST):
            if value.cload:
                cache[value.cway] = value.addr >> ADDR_LO_BITS
            way = None
        elif cls is _FLOW_CONTROL and not any(value):  # all zero: a NOP sector
            continue
        else:
            way = None
        fields.append(value)
        found.append(way)


_REQUEST, _COMPRESSED_REQUEST, _FLOW_CONTROL = C.Request, C.CompressedRequest, C.FlowControl
_REQUEST_FTYPE = int(C.FTYPE_OF[C.Request])

#: The fields rule 3 (:func:`~ualink_ref.tl.framing.data_halves`) reads, by field class:
#: the framing walk keys a table of its answers on these bits, so it reads no other
#: field and builds no typed value. ``tests/capture/test_dissect_tl.py`` checks that
#: ``data_halves`` gives the same answer with every other field changed.
RULE3_READS: dict[type[C.TLField], tuple[str, ...]] = {
    C.Request: ("cmd", "numbeats"),
    C.CompressedRequest: ("cmd", "numbeats"),
    C.Response: ("len", "rd_wr", "status"),
    C.CompressedResponseData: ("len",),
}


def _rule3_mask(ftype: int) -> int:
    fmt = F.FORMATS[ftype]
    return sum(fmt.field(n).max_value << fmt.position(n).shift
               for n in RULE3_READS.get(C.CLASSES[F.FType(ftype)], ()))


#: FTYPE -> the mask of the bits rule 3 reads (0 for an unknown FTYPE: never asked).
_RULE3_MASK = tuple(_rule3_mask(ft) if C.SECTORS_OF[ft] else 0 for ft in range(16))
if max(m.bit_count() for m in _RULE3_MASK) > 12:  # pragma: no cover
    raise ImportError("rule 3 reads too many bits for a table keyed on them")
#: FTYPE -> {bits rule 3 reads: data half-flits}: filled as met, at most 2**12 per FTYPE.
_RULE3_TABLE: tuple[dict[int, int], ...] = tuple({} for _ in range(16))


def owed_after(half: bytes) -> tuple[int, bool]:
    """``(data half-flits owed after it, whether it holds an uncompressed request)`` for
    control half-flit ``half`` (framing rule 3 over its fields). Raises
    :class:`~ualink_ref.errors.DecodeError` when it cannot be framed (unknown FTYPE or
    command, a field that straddles the half-flit)."""
    owed = 0
    request = False
    for ftype, bits in C.control_words(half):
        key = bits & _RULE3_MASK[ftype]
        table = _RULE3_TABLE[ftype]
        need = table.get(key)
        if need is None:  # first time: rule 3 itself, on a value with only these bits
            need = table[key] = data_halves(C.unpack_word(ftype, key))
        owed += need
        if ftype == _REQUEST_FTYPE:
            request = True
    return owed, request


class TLStream:
    """One direction's TL stream as the dissector follows it (see the module docstring)."""

    __slots__ = ("owed", "partial", "ways")

    def __init__(self) -> None:
        self.partial = b""  # TL bytes of a TL flit not yet complete
        self.owed = 0  # data half-flits owed before the next control half-flit
        #: Address cache: way -> address bits above ``addr_lo`` of the loading request
        #: (a tuple, replaced when a request loads a way: each flit keeps the one it saw).
        self.ways: _Ways = NO_WAYS

    def resync(self) -> None:
        """Forget the TL stream held so far: the next TL byte starts a TL flit (the
        address cache is kept: the sender's is unchanged)."""
        self.partial = b""
        self.owed = 0

    def add(self, tl: bytes, notes: list[str]) -> tuple[
            tuple[bytes, ...], tuple[int | None, ...], tuple[bytes, ...], _Ways]:
        """Take the TL bytes of one accepted DL flit; walk every TL flit they complete.

        Returns ``(raw, owed, control, cache)``: the raw TL flits; for each, the data
        half-flits owed before it, or ``None`` when it could not be framed (unknown
        FTYPE or command, a field that straddles the half-flit: a note is added and
        the framing restarts); the control half-flits of those that framed, in order;
        and the address cache before the first of them. :func:`read_control` reads the
        reported fields from the last two when they are first asked for. (Only rule 3's
        bits are read here: this runs for every DL flit, typed values for every field
        cost more than the rest of it, and most readers never look at them.)
        """
        cache = self.ways
        data = self.partial + tl if self.partial else tl
        whole = len(data) - len(data) % TL_FLIT_BYTES
        self.partial = data[whole:]
        if not whole:
            return _NONE
        raw = tuple([data[k:k + TL_FLIT_BYTES] for k in range(0, whole, TL_FLIT_BYTES)])
        framed: list[int | None] = []
        control: list[bytes] = []
        owed = self.owed
        for chunk in raw:
            framed.append(owed)
            if owed >= 2:  # both halves are data: nothing to read
                owed -= 2
                continue
            # Framing rules 2-4 with the count alone: a half-flit is data while data is
            # owed; a control half-flit's fields say how much is owed after it. Both
            # control half-flits are framed before anything is kept, so a TL flit that
            # cannot be framed leaves no trace but its note.
            try:
                if owed:  # half 0 is the last data half owed: half 1 is control
                    half = chunk[TL_HALF_BYTES:]
                    owed, request = owed_after(half)
                    halves: tuple[bytes, ...] = (half,)
                else:
                    half = chunk[:TL_HALF_BYTES]
                    owed, request = owed_after(half)
                    halves = (half,)
                    if owed:  # half 1 is data
                        owed -= 1
                    else:  # half 1 is control too
                        second = chunk[TL_HALF_BYTES:]
                        owed, also = owed_after(second)
                        halves = (half, second)
                        request = request or also
            except DecodeError as exc:
                notes.append(f"TL flit not decodable ({exc}); TL stream resynchronises")
                framed[-1] = None
                owed = 0
                continue
            control += halves
            if request:  # an uncompressed request may load an address-cache way
                ways = list(self.ways)
                for h in halves:
                    _read(h, ways, [], [])
                self.ways = tuple(ways)
        self.owed = owed
        return raw, tuple(framed), tuple(control), cache


#: What :meth:`TLStream.add` returns when no TL flit completes.
_NONE: tuple[tuple[bytes, ...], tuple[int | None, ...], tuple[bytes, ...], _Ways] = (
    (), (), (), NO_WAYS)


__all__ = ["NO_WAYS", "RULE3_READS", "TLOp", "TLStream", "credits_of", "lazy", "ops_of",
           "owed_after", "read_control"]
