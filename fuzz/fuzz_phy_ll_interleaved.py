"""atheris harness: RS(272,258) wire bytes with 2-way interleave."""

from __future__ import annotations

import atheris
from _harness import main, only_decode_errors

with atheris.instrument_imports():
    from ualink_ref.phy import decode_flits, encode_flits



def DECODE(wire: bytes) -> object:
    """Decode the wire bytes."""
    return decode_flits(wire, "ll", 2)


#: Valid inputs: a starting corpus, and a check that the harness targets the right decoder.
SEEDS = [encode_flits(bytes(1280), "ll", 2)]
TestOneInput = only_decode_errors(DECODE)

if __name__ == "__main__":
    main(TestOneInput)
