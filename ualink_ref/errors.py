"""The one exception tree of ualink_ref.

Every decoder in the package raises only subclasses of :class:`UALinkError`,
whatever bytes it is given; callers can therefore catch ``UALinkError`` (or
the narrower ``DecodeError``) and be sure nothing else escapes::

    UALinkError
     ├── DecodeError (ValueError)       malformed bytes
     │    ├── TruncatedError            wrong length (too short or too long)
     │    ├── FieldRangeError           a field holds a value the format forbids
     │    ├── CrcError                  a checksum does not match
     │    └── ReservedBitsError         a must-be-zero field is not zero
     ├── FecUncorrectableError          more symbol errors than the code corrects
     ├── EncodeError (ValueError)       a value that does not fit its field
     └── ProtocolError                  a peer or caller broke the rules
          ├── SequenceError
          ├── CreditError
          ├── TagError
          ├── LinkStalledError           a link made no progress within its bound
          └── TargetProtocolError        an implementation under difftest broke the line protocol
"""

from __future__ import annotations


class UALinkError(Exception):
    """Base class of every error raised by ualink_ref."""


class DecodeError(UALinkError, ValueError):
    """Bytes (or symbols) that do not form a valid value of the format."""


class TruncatedError(DecodeError):
    """Input of the wrong length: too short, too long, or not a whole unit."""

    def __init__(self, what: str, expected: int | str, actual: int) -> None:
        super().__init__(f"{what}: expected {expected} bytes, got {actual}")
        self.what = what
        self.expected = expected
        self.actual = actual


class FieldRangeError(DecodeError):
    """A field holds a value that the format does not allow (e.g. unknown enum)."""

    def __init__(self, field: str, value: int, reason: str = "value not allowed") -> None:
        super().__init__(f"field {field!r}: {reason} ({value:#x})")
        self.field = field
        self.value = value


class CrcError(DecodeError):
    """A CRC (or other check value) did not match."""

    def __init__(self, expected: int, actual: int, what: str = "CRC") -> None:
        super().__init__(f"{what} mismatch: expected {expected:#010x}, computed {actual:#010x}")
        self.expected = expected
        self.actual = actual


class ReservedBitsError(DecodeError):
    """A reserved field that the format requires to be zero is not zero."""

    def __init__(self, field: str, value: int) -> None:
        super().__init__(f"reserved field {field!r} must be zero, got {value:#x}")
        self.field = field
        self.value = value


class FecUncorrectableError(UALinkError):
    """A codeword has more symbol errors than the FEC can correct."""

    def __init__(self, count: int, indices: list[int] | None = None) -> None:
        where = f" (codewords {indices[:8]}{'...' if len(indices) > 8 else ''})" if indices else ""
        super().__init__(f"{count} uncorrectable codeword(s){where}")
        self.count = count
        self.indices = indices or []


class EncodeError(UALinkError, ValueError):
    """A value that cannot be encoded: out of its field's range or of the wrong shape."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class ProtocolError(UALinkError):
    """A peer or a caller broke a protocol rule."""


class SequenceError(ProtocolError):
    """A sequence number outside what the protocol allows at this point."""


class CreditError(ProtocolError):
    """A credit rule was broken (e.g. a peer sent without a credit)."""


class TagError(ProtocolError):
    """A tag was reused while outstanding, or a response names an unknown tag."""


class LinkStalledError(ProtocolError, RuntimeError):
    """A simulated link made no progress within its slot bound (e.g. a BER no retry gets
    through); also a ``RuntimeError`` for callers that treat it as a run-time failure."""


class TargetProtocolError(ProtocolError):
    """An implementation under differential test broke the difftest line protocol
    (``specs/difftest.md``): an unparsable response, no response, or it exited.

    ``line`` is the offending response (``""`` when there was none).
    """

    def __init__(self, message: str, line: str) -> None:
        super().__init__(f"{message}: {line[:80]!r}" if line else message)
        self.line = line


__all__ = [
    "CrcError",
    "CreditError",
    "DecodeError",
    "EncodeError",
    "FecUncorrectableError",
    "FieldRangeError",
    "LinkStalledError",
    "ProtocolError",
    "ReservedBitsError",
    "SequenceError",
    "TagError",
    "TargetProtocolError",
    "TruncatedError",
    "UALinkError",
]
