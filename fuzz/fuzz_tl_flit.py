"""atheris harness: 64-byte TL flits (control / data half-flits, every field type)."""

from __future__ import annotations

import atheris
from _harness import main, only_decode_errors

with atheris.instrument_imports():
    from ualink_ref.tl.flit import dissect

DECODE = dissect
#: Valid inputs: a starting corpus, and a check that the harness targets the right decoder.
SEEDS = [bytes(64), bytes.fromhex("1c" + "00" * 15) + bytes(48)]
TestOneInput = only_decode_errors(DECODE)

if __name__ == "__main__":
    main(TestOneInput)
