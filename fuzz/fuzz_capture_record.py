"""atheris harness: one capture record (pseudo-header + data)."""

from __future__ import annotations

import atheris
from _harness import fix_record, main, only_decode_errors

with atheris.instrument_imports():
    from ualink_ref.capture.format import CaptureRecord

DECODE = CaptureRecord.decode
#: Valid inputs: a starting corpus, and a check that the harness targets the right decoder.
SEEDS = [CaptureRecord(bytes(640)).encode()]
#: Structured mode: magic, version, lengths and the flit's CRC repaired.
FIXUP = fix_record
TestOneInput = only_decode_errors(DECODE, FIXUP)

if __name__ == "__main__":
    main(TestOneInput)
