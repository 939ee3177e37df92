"""atheris harness: 640-byte DL flits (CRC, header, segment headers, layout)."""

from __future__ import annotations

import atheris
from _harness import flits_with_crc, main, only_decode_errors

with atheris.instrument_imports():
    from ualink_ref.dl import DLFlit
    from ualink_ref.dl.formats import FlitOp

DECODE = DLFlit.decode
#: Valid inputs: a starting corpus, and a check that the harness targets the right decoder.
SEEDS = [
    DLFlit(FlitOp.EXPLICIT, flit_seq=1, tl=bytes(range(256)) * 2).encode(),
    DLFlit(FlitOp.ACK, ack_req_seq=3).encode(),
]
#: Structured mode: the CRC is recomputed, so mutations reach the header and segment parsers.
FIXUP = flits_with_crc
TestOneInput = only_decode_errors(DECODE, FIXUP)

if __name__ == "__main__":
    main(TestOneInput)
