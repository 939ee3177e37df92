"""The one exception tree of ualink_ref.

Every decoder in the package raises only subclasses of :class:`UALinkError`,
whatever bytes it is given; callers can therefore catch ``UALinkError`` (or
the narrower ``DecodeError``) and be sure nothing else escapes::

    UALinkError
     ├── DecodeError (ValueError)       malformed bytes
     │    ├── TruncatedError            wrong length (too short or too long)
     │    ├── FieldRangeError           a field holds a value the format forbids
     │    ├── CrcError                  a checksum does not match
     │    ├── ReservedBitsError         a must-be-zero field is not zero
     │    ├── CaptureFormatError        a capture file or record that is not ours / malformed
     │    └── VectorFormatError         a golden-vector file or case that cannot be read
     ├── FecUncorrectableError          more symbol errors than the code corrects
     ├── EncodeError (ValueError)       a value that does not fit its field
     │    └── ConfigError               a configuration option out of its range
     ├── ProtocolError                  a peer or caller broke the rules
     │    ├── SequenceError             a sequence number the rules do not allow here
     │    ├── CreditError               a credit rule was broken
     │    ├── TagError                  unknown or reused tag
     │    ├── MisroutedError            a packet for another accelerator arrived here
     │    ├── ResponseMismatchError     a response that does not fit its request
     │    ├── AddressCacheError         a compressed request names an empty cache way
     │    ├── UnsupportedError          a legal input the model does not implement
     │    ├── LinkFailedError           an operation issued on a TL that declared its link failed
     │    └── TargetProtocolError       an implementation under difftest broke the line protocol
     │         ├── TargetCrashed        ... it exited or was killed by a signal
     │         └── TargetTimeout        ... it gave no response line in time
     ├── FaultPlanError (ValueError)    a fault-plan entry that cannot be read
     └── LinkStalledError               a simulated link made no progress within its bound
          └── CaptureIncomplete         ... while recording: carries the records so far

Each class carries the values involved as attributes (h2's habit), so a
caller can act on them without parsing the message. Nothing here inherits
from a builtin just to be catchable as it: ``DecodeError`` and
``EncodeError`` are ``ValueError`` s because they are bad values.
"""

from __future__ import annotations

import signal as _signal
from typing import Any


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


class ConfigError(EncodeError):
    """A configuration option holds a value its rule forbids (``option`` names it).

    Raised once, when the configuration object is built (``__post_init__``); an
    option that does not exist at all is Python's own ``TypeError`` from the
    dataclass constructor. An ``EncodeError`` (so a ``ValueError``) because it is a
    value that does not fit.
    """

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option}: {message}", field=option)
        self.option = option
        self._message = message

    def __reduce__(self) -> tuple[type[ConfigError], tuple[str, str]]:
        """Pickled with its own arguments (a worker process's error reaches its parent)."""
        return type(self), (self.option, self._message)


class ProtocolError(UALinkError):
    """A peer or a caller broke a protocol rule."""


class SequenceError(ProtocolError):
    """A sequence number outside what the protocol allows at this point."""


class CreditError(ProtocolError):
    """A credit rule was broken (e.g. a peer sent without a credit)."""


class TagError(ProtocolError):
    """A tag was reused while outstanding, or a response names an unknown tag."""


class MisroutedError(ProtocolError):
    """A request or response addressed to accelerator ``dst`` arrived at ``at``."""

    def __init__(self, what: str, dst: int, at: int) -> None:
        super().__init__(f"{what} for accelerator {dst} arrived at {at}")
        self.what = what
        self.dst = dst
        self.at = at


class ResponseMismatchError(ProtocolError):
    """A response that does not fit its request: ``field`` was ``got``, ``expected`` wanted."""

    def __init__(self, tag: int, field: str, got: object, expected: object) -> None:
        super().__init__(f"response for tag {tag}: {field} is {got}, expected {expected}")
        self.tag = tag
        self.field = field
        self.got = got
        self.expected = expected


class AddressCacheError(ProtocolError):
    """A compressed request names address-cache way ``way``, which holds no address."""

    def __init__(self, way: int) -> None:
        super().__init__(f"compressed request names an empty address-cache way ({way})")
        self.way = way


class UnsupportedError(ProtocolError):
    """A legal input that this model does not implement (``feature`` names it)."""

    def __init__(self, feature: str) -> None:
        super().__init__(f"not modelled: {feature}")
        self.feature = feature


class LinkFailedError(ProtocolError):
    """The transaction layer declared its link failed (``reason`` says why) and
    accepts no new operations; everything outstanding was completed with an error."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"link failed: {reason}")
        self.reason = reason


class FaultPlanError(UALinkError, ValueError):
    """A fault plan entry that cannot be read (``entry`` is its text)."""

    def __init__(self, message: str, entry: str = "") -> None:
        super().__init__(f"fault plan entry {entry!r}: {message}" if entry else message)
        self.entry = entry


class LinkStalledError(UALinkError):
    """A simulated link or network made no progress within its bound.

    ``slots`` is how long it ran; ``completed`` / ``total`` the operations done
    (``None`` where there are none); ``seed`` the run's seed, for reproducing it.
    """

    def __init__(self, slots: float, reason: str, *, completed: int | None = None,
                 total: int | None = None, seed: int | None = None) -> None:
        ops = "" if total is None else f" ({completed}/{total} ops completed)"
        again = "" if seed is None else f" [seed {seed}]"
        super().__init__(f"stalled after {slots:g} slots: {reason}{ops}{again}")
        self.slots = slots
        self.reason = reason
        self.completed = completed
        self.total = total
        self.seed = seed


class CaptureIncomplete(LinkStalledError):
    """A recorded run stalled; ``records`` holds what the link carried until then
    (a capture of a link that cannot make progress is still worth reading)."""

    def __init__(self, stalled: LinkStalledError, records: list[Any]) -> None:
        super().__init__(stalled.slots, stalled.reason, completed=stalled.completed,
                         total=stalled.total, seed=stalled.seed)
        self.records = records


class CaptureFormatError(DecodeError):
    """A capture file or record that is malformed or not a ualink_ref capture."""


class VectorFormatError(DecodeError):
    """A golden-vector file, case or input that cannot be read (``where`` names it)."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where


class TargetProtocolError(ProtocolError):
    """An implementation under differential test broke the difftest line protocol
    (``specs/difftest.md``): an unparsable or wrong-shaped response, or it closed
    a pipe; the subclasses: it exited, or gave no response in time.

    ``line`` is the offending response (``""`` when there was none; bytes that are
    not ASCII as the characters of the same codes), shown escaped to ASCII.
    """

    def __init__(self, message: str, line: str) -> None:
        super().__init__(f"{message}: {line[:80]!a}" if line else message)
        self.line = line


class TargetCrashed(TargetProtocolError):
    """A difftest target process ended while a request was outstanding (``specs/difftest.md``).

    ``target`` names it (its command's first word); ``status`` is its exit
    status, or ``None`` when a signal ended it (``signal`` is then the signal
    number); ``answered`` counts the lines it had answered since it started.
    """

    def __init__(self, target: str, returncode: int, answered: int) -> None:
        self.target = target
        self.status = returncode if returncode >= 0 else None
        self.signal = -returncode if returncode < 0 else None
        self.answered = answered
        super().__init__(f"target {target!r} {self.how()} after answering {answered} line(s)", "")

    def how(self) -> str:
        """``exited with status N`` or ``was killed by signal N (SIGNAME)``."""
        if self.signal is None:
            return f"exited with status {self.status}"
        try:
            name = f" ({_signal.Signals(self.signal).name})"
        except ValueError:  # a number this platform has no name for
            name = ""
        return f"was killed by signal {self.signal}{name}"


class TargetTimeout(TargetProtocolError):
    """A difftest target gave no response line within ``seconds`` (it is then killed);
    ``answered`` counts the lines it had answered since it started."""

    def __init__(self, target: str, seconds: float, answered: int) -> None:
        self.target = target
        self.seconds = seconds
        self.answered = answered
        super().__init__(f"no response from target {target!r} within {seconds:g} s (after "
                         f"answering {answered} line(s)); it was killed", "")


__all__ = [
    "AddressCacheError",
    "CaptureFormatError",
    "CaptureIncomplete",
    "ConfigError",
    "CrcError",
    "CreditError",
    "DecodeError",
    "EncodeError",
    "FaultPlanError",
    "FecUncorrectableError",
    "FieldRangeError",
    "LinkFailedError",
    "LinkStalledError",
    "MisroutedError",
    "ProtocolError",
    "ReservedBitsError",
    "ResponseMismatchError",
    "SequenceError",
    "TagError",
    "TargetCrashed",
    "TargetProtocolError",
    "TargetTimeout",
    "TruncatedError",
    "UALinkError",
    "UnsupportedError",
    "VectorFormatError",
]
