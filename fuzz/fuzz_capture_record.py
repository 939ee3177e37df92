"""atheris harness: one capture record (pseudo-header + data)."""

from __future__ import annotations

import atheris
from _harness import main, only_decode_errors

with atheris.instrument_imports():
    from ualink_ref.capture.format import CaptureRecord

DECODE = CaptureRecord.decode
#: Valid inputs: a starting corpus, and a check that the harness targets the right decoder.
SEEDS = [CaptureRecord(bytes(640)).encode()]
TestOneInput = only_decode_errors(DECODE)

if __name__ == "__main__":
    main(TestOneInput)
