"""Samplers for bytes on the wire: DL flits, DL message words, TL flits and fields,
capture pseudo-headers (specs/coverage.md "Where values are read").

Every sampler reads *raw* field values (no checks) and never raises on bad bytes:
a vector file may hold anything, and a decode input is sampled as it is.
"""

from __future__ import annotations

from collections.abc import Iterable

from ualink_ref.bitfields import BitFormat
from ualink_ref.capture.format import PSEUDO_HEADER
from ualink_ref.dl import formats as dlf
from ualink_ref.dl.segments import walk_segments
from ualink_ref.errors import DecodeError
from ualink_ref.testing.coverage.fields import sample_bytes, sample_word
from ualink_ref.testing.coverage.model import Coverage
from ualink_ref.testing.coverage.points import COMMAND_SIZE_FEC, FEC_MODES, SIZE_CLASSES
from ualink_ref.testing.coverage.rules import fact
from ualink_ref.tl.fields import COMMANDS, FORMATS, FTYPE_NAMES, FType
from ualink_ref.tl.flit import dissect

_OP_OF = dlf.FlitOp
#: (mclass, mtype) -> message layout, from the layouts' own defaults (as the decoder).
_MESSAGE_LAYOUTS: dict[tuple[int, int], BitFormat] = {
    (fmt.field("mclass").default, fmt.field("mtype").default): fmt
    for fmt in (dlf.NOOP_MESSAGE, dlf.TL_RATE_MESSAGE, dlf.DEVICE_ID_MESSAGE,
                dlf.PORT_NUMBER_MESSAGE, dlf.CHANNEL_NEGOTIATION_MESSAGE, dlf.UART_MESSAGE)
}
_REQUESTS = (FType.REQUEST, FType.COMPRESSED_REQUEST)


def sample_message(cov: Coverage, word: int) -> None:
    """A 32-bit DL message word: its common fields, then its own layout's fields."""
    if not 0 <= word <= 0xFFFFFFFF:
        return
    sample_word(cov, dlf.DL_MESSAGE, word)
    mclass = dlf.field_of(dlf.DL_MESSAGE, word, "mclass")
    mtype = dlf.field_of(dlf.DL_MESSAGE, word, "mtype")
    if dlf.field_of(dlf.DL_MESSAGE, word, "compressed"):
        return  # decodes as unknown: no layout beyond the common fields
    if mclass == dlf.MessageClass.VENDOR:
        sample_word(cov, dlf.VENDOR_MESSAGE, word)
    elif (mclass, mtype) in _MESSAGE_LAYOUTS:
        sample_word(cov, _MESSAGE_LAYOUTS[(mclass, mtype)], word)


def sample_dl_flit(cov: Coverage, data: bytes) -> int | None:
    """A DL flit (any bytes): header, segment headers, message words. Returns its op
    (``None`` when shorter than a header)."""
    size = dlf.EXPLICIT_HEADER.byte_length
    if len(data) < size:
        return None
    op = dlf.header_op(data)
    header = dlf.COMMAND_HEADER if op in (_OP_OF.ACK, _OP_OF.REPLAY_REQUEST) else \
        dlf.EXPLICIT_HEADER
    sample_bytes(cov, header, data)
    word = int.from_bytes(data[:size], "big")
    if header is dlf.EXPLICIT_HEADER and op in (_OP_OF.EXPLICIT, _OP_OF.REPLAY) and \
            dlf.field_of(header, word, "flit_seq") == 511:
        fact(cov, "dl.seq_511")
    if op == _OP_OF.ACK and dlf.header_payload(data):
        fact(cov, "dl.implicit_seq")
    for segment in walk_segments(data, strict=False):
        sample_word(cov, dlf.SEGMENT_HEADER, segment.header)
        if segment.message is not None:
            fact(cov, "dl.message_in_flit")
            sample_message(cov, segment.message)
    return op


def sample_tl_field(cov: Coverage, data: bytes) -> None:
    """One TL control field's bytes (FTYPE first): the layout its FTYPE names."""
    if not data:
        return
    ftype = data[0] >> 4
    fmt = FORMATS.get(ftype)
    if fmt is None or not sample_bytes(cov, fmt, data):  # unknown, or cut short: FTYPE only
        cov.hit("field:tl.ftype", FTYPE_NAMES.get(ftype, "unknown_enum"))


def size_class(length_field: int) -> str:
    """The size class of a read or write request whose ``len`` field is given."""
    nbytes = 4 * (length_field + 1)
    return SIZE_CLASSES[0] if nbytes <= 8 else SIZE_CLASSES[1] if nbytes <= 64 else \
        SIZE_CLASSES[2]


def sample_request(cov: Coverage, values: dict[str, int], fec: str | None) -> None:
    """A request field's command and size on a link with FEC mode ``fec``."""
    name = COMMANDS.get(values.get("cmd", -1))
    if name is None or fec not in FEC_MODES:
        return
    size = "operand" if name.startswith("Atomic") else size_class(values.get("len", 0))
    cov.hit(COMMAND_SIZE_FEC, f"{name}/{size}/{fec}")


def sample_tl_flits(cov: Coverage, flits: Iterable[bytes], *, pending: int = 0,
                    fec: str | None = None) -> list[dict[str, int]]:
    """Consecutive TL flits of one direction: every control field, raw. Returns the
    values of every field that is not NOP padding (for the callers' facts); stops at
    the first flit that does not frame (nothing after it can be read)."""
    found: list[dict[str, int]] = []
    for flit in flits:
        try:
            view = dissect(flit, pending)
        except DecodeError:
            return found
        pending = view.pending_after
        for half in view.halves:
            for cf in half.fields:
                start = 4 * cf.sector
                sample_bytes(cov, cf.format, half.raw[start:start + cf.format.byte_length])
                if cf.is_nop:
                    continue
                found.append(dict(cf.values))
                if cf.ftype in _REQUESTS:
                    sample_request(cov, dict(cf.values), fec)
    return found


def sample_pseudo_header(cov: Coverage, data: bytes) -> None:
    """A capture record's first 16 bytes."""
    sample_bytes(cov, PSEUDO_HEADER, data)


__all__ = ["sample_dl_flit", "sample_message", "sample_pseudo_header", "sample_request",
           "sample_tl_field", "sample_tl_flits", "size_class"]
