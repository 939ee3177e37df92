"""atheris harness: pcap / pcapng container parsing plus record decoding."""

from __future__ import annotations

import atheris
from _harness import main, only_decode_errors

with atheris.instrument_imports():
    from ualink_ref.capture.format import CaptureRecord, decode_capture, encode_capture

DECODE = decode_capture
#: Valid inputs: a starting corpus, and a check that the harness targets the right decoder.
SEEDS = [encode_capture([CaptureRecord(bytes(640))], fmt=f) for f in ("pcap", "pcapng")]
TestOneInput = only_decode_errors(DECODE)

if __name__ == "__main__":
    main(TestOneInput)
