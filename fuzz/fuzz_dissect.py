"""atheris harness: the capture dissector on arbitrary pcap bytes (only DecodeError from
the container; the dissector itself must never raise)."""

from __future__ import annotations

import atheris
from _harness import fix_capture, main, only_decode_errors

with atheris.instrument_imports():
    from ualink_ref.capture.dissect import dissect_records
    from ualink_ref.capture.format import CaptureRecord, decode_capture, encode_capture
    from ualink_ref.capture.listing import render, summarize


def DECODE(data: bytes) -> str:
    """Read, dissect and render a whole capture."""
    flits = dissect_records(decode_capture(data))
    return "\n".join(render(f, verbose=True) for f in flits) + summarize(flits)


SEEDS = [encode_capture([CaptureRecord(bytes(640)), CaptureRecord(bytes(680), "fec_codewords")])]
#: Structured mode: a valid container around repaired records (see _harness.fix_capture).
FIXUP = fix_capture
TestOneInput = only_decode_errors(DECODE, FIXUP)

if __name__ == "__main__":
    main(TestOneInput)
