"""atheris harness: pcap / pcapng container parsing plus record decoding."""

from __future__ import annotations

import atheris
from _harness import fix_capture, main, only_decode_errors

with atheris.instrument_imports():
    from ualink_ref.capture.format import CaptureRecord, decode_capture, encode_capture

DECODE = decode_capture
#: Valid inputs: a starting corpus, and a check that the harness targets the right decoder.
SEEDS = [encode_capture([CaptureRecord(bytes(640))], fmt=f) for f in ("pcap", "pcapng")]
#: Structured mode: a valid container around repaired records (see _harness.fix_capture).
FIXUP = fix_capture
TestOneInput = only_decode_errors(DECODE, FIXUP)

if __name__ == "__main__":
    main(TestOneInput)
