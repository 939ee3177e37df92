"""The memh/CSV export layout, version 2: which fields go where, and the code tables.

Declared once here and specified in ``specs/difftest.md`` ("Export"): the
streams and their word widths (:data:`STREAMS`), the exported fields of every
golden-vector kind in field-number order (:data:`FIELDS`), and the codes the
index word carries (:data:`KIND_CODES`, :data:`VERDICT_CODES`,
:data:`MODE_CODES`). The bit layout of the index word is :data:`INDEX_FIELDS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ualink_ref.capture.format import FEC_MODES

#: Format version of the export, in every index word and file header (specs/difftest.md
#: X1). Version 1 had a 128-bit index with no kind, mode or FEC outcome.
MEMH_VERSION = 2

#: Stream numbers (index ``stream`` byte): bit 0 direction (0 stimulus, 1 expected),
#: bit 1 word kind (0 bytes, 1 ten-bit RS symbols).
STIM_BYTES, EXPECT_BYTES, STIM_SYMBOLS, EXPECT_SYMBOLS = 0, 1, 2, 3


@dataclass(frozen=True)
class Stream:
    """One stream file: its name part, word width in bits and hex digits per word."""

    number: int
    suffix: str
    width: int

    @property
    def digits(self) -> int:
        """Hex digits per memh word."""
        return -(-self.width // 4)

    @property
    def expected(self) -> bool:
        """True for an expected-response stream, False for stimulus."""
        return bool(self.number & 1)


#: The four streams by number; file ``<name>.<suffix>.memh`` (specs/difftest.md X2).
STREAMS: dict[int, Stream] = {
    STIM_BYTES: Stream(STIM_BYTES, "stim", 8),
    EXPECT_BYTES: Stream(EXPECT_BYTES, "expect", 8),
    STIM_SYMBOLS: Stream(STIM_SYMBOLS, "stim.sym", 10),
    EXPECT_SYMBOLS: Stream(EXPECT_SYMBOLS, "expect.sym", 10),
}


@dataclass(frozen=True)
class FieldSpec:
    """One exported field of a kind: where its value sits in the case and its stream.

    ``fec_only``: exported only when the case's FEC mode codes symbols (not ``none``).
    """

    source: str  # "inputs" or "expected"
    key: str
    stream: int
    fec_only: bool = False

    @property
    def name(self) -> str:
        """``inputs.<key>`` or ``expected.<key>``: the JSON path of the value."""
        return f"{self.source}.{self.key}"


def _f(path: str, stream: int, fec_only: bool = False) -> FieldSpec:
    source, key = path.split(".", 1)
    return FieldSpec(source, key, stream, fec_only)


_S8, _E8, _S10, _E10 = STIM_BYTES, EXPECT_BYTES, STIM_SYMBOLS, EXPECT_SYMBOLS

#: (layer, kind) -> exported fields; the position is the index ``field`` number. The
#: stimulus is what the device under test is driven with, the expected stream what it
#: must produce (X3): a decoder's stimulus is the *received* word (``expected.wire`` /
#: ``expected.received`` in the JSON, computed there from the sent data and the errors).
FIELDS: dict[tuple[str, str], tuple[FieldSpec, ...]] = {
    ("phy", "rs_encode"): (_f("inputs.message", _S10), _f("expected.parity", _E10),
                           _f("expected.wire", _E8), _f("expected.wire", _E10)),
    ("phy", "rs_decode"): (_f("expected.received", _S10), _f("expected.message", _E10)),
    ("phy", "flit_encode"): (_f("inputs.flits", _S8), _f("expected.wire", _E8),
                             _f("expected.wire", _E10, fec_only=True)),
    ("phy", "flit_decode"): (_f("expected.wire", _S8), _f("expected.wire", _S10, fec_only=True),
                             _f("expected.flits", _E8)),
    ("dl", "flit_encode"): (_f("inputs.tl", _S8), _f("expected.flit", _E8),
                            _f("expected.header", _E8), _f("expected.crc", _E8)),
    ("dl", "flit_decode"): (_f("inputs.flit", _S8),),
    ("dl", "message_encode"): (_f("expected.word", _E8),),
    ("tl", "field_encode"): (_f("expected.hex", _E8),),
    ("tl", "field_decode"): (_f("inputs.hex", _S8),),
    ("tl", "control_half"): (_f("expected.hex", _E8),),
    ("tl", "dissect"): (_f("inputs.flit", _S8),),
    ("tl", "credit_grant"): (_f("expected.flit", _E8),),
    ("capture", "pseudo_header"): (_f("inputs.data", _S8), _f("expected.hex", _E8)),
    ("capture", "pcap_file"): (_f("inputs.data", _S8), _f("expected.pcap", _E8),
                               _f("expected.pcapng", _E8)),
}

#: (layer, kind) -> index ``kind`` code; the high nibble is the layer (0 phy, 1 dl,
#: 2 tl, 3 capture). Codes are never reused (X4).
KIND_CODES: dict[tuple[str, str], int] = {
    ("phy", "rs_encode"): 0x01, ("phy", "rs_decode"): 0x02,
    ("phy", "flit_encode"): 0x03, ("phy", "flit_decode"): 0x04,
    ("dl", "flit_encode"): 0x11, ("dl", "flit_decode"): 0x12, ("dl", "message_encode"): 0x13,
    ("tl", "field_encode"): 0x21, ("tl", "field_decode"): 0x22, ("tl", "control_half"): 0x23,
    ("tl", "dissect"): 0x24, ("tl", "credit_grant"): 0x25,
    ("capture", "pseudo_header"): 0x31, ("capture", "pcap_file"): 0x32,
}

#: Verdict code of a case, from its expected ``error``; ``FecUncorrectableError`` also
#: for a decode whose ``uncorrectable`` is set (X5). 0: accepted or not a decoder.
VERDICT_CODES: dict[str, int] = {"TruncatedError": 1, "CrcError": 2, "FieldRangeError": 3,
                                 "ReservedBitsError": 4, "FecUncorrectableError": 5}
#: Verdict code of an error class not in :data:`VERDICT_CODES`.
OTHER_ERROR = 0xFF

#: FEC mode name -> index ``mode`` code: the capture pseudo-header's numbering
#: (ualink_ref.capture.format.FEC_MODES), so one number means one mode everywhere.
MODE_CODES: dict[str, int] = {name: code for code, name in FEC_MODES.items()}
#: Index ``mode`` of a case whose inputs name no FEC mode.
NO_MODE = 0xFF
#: Input keys that name a case's FEC mode (``mode`` of flits, ``code`` of RS
#: codewords, ``fec_mode`` of capture records), first found wins.
MODE_KEYS = ("mode", "code", "fec_mode")

#: The index word, MSB first: (name, width in bits). 192 bits = 48 hex digits, every
#: field on a byte boundary so it can be read off the hex (X6).
INDEX_FIELDS: tuple[tuple[str, int], ...] = (
    ("version", 8), ("kind", 8), ("case", 16),
    ("field", 8), ("stream", 8), ("mode", 8), ("interleave", 8),
    ("verdict", 8), ("reserved", 8), ("uncorrectable", 16),
    ("corrected", 32),
    ("offset", 32),
    ("length", 32),
)
#: Bits in an index word.
INDEX_BITS = sum(width for _, width in INDEX_FIELDS)


def pack_index(values: dict[str, int]) -> int:
    """The index word of ``values`` (every :data:`INDEX_FIELDS` name; ``reserved`` may be
    absent); raises ``ValueError`` for a value that does not fit its field."""
    word = 0
    for name, width in INDEX_FIELDS:
        value = values.get(name, 0)
        if not 0 <= value < 1 << width:
            raise ValueError(f"index field {name} = {value} does not fit in {width} bits")
        word = (word << width) | value
    return word


def unpack_index(word: int) -> dict[str, int]:
    """The fields of an index word (inverse of :func:`pack_index`)."""
    out: dict[str, int] = {}
    shift = INDEX_BITS
    for name, width in INDEX_FIELDS:
        shift -= width
        out[name] = (word >> shift) & ((1 << width) - 1)
    return out


__all__ = ["EXPECT_BYTES", "EXPECT_SYMBOLS", "FIELDS", "INDEX_BITS", "INDEX_FIELDS",
           "KIND_CODES", "MEMH_VERSION", "MODE_CODES", "MODE_KEYS", "NO_MODE", "OTHER_ERROR",
           "STIM_BYTES", "STIM_SYMBOLS", "STREAMS", "VERDICT_CODES", "FieldSpec", "Stream",
           "pack_index", "unpack_index"]
