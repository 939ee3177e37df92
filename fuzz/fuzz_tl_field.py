"""atheris harness: one TL control field (its length from FTYPE)."""

from __future__ import annotations

import atheris
from _harness import main, only_decode_errors

with atheris.instrument_imports():
    from ualink_ref.tl.fields import decode_field

DECODE = decode_field
#: Valid inputs: a starting corpus, and a check that the harness targets the right decoder.
SEEDS = [bytes(4), bytes.fromhex("1c" + "00" * 15)]
TestOneInput = only_decode_errors(DECODE)

if __name__ == "__main__":
    main(TestOneInput)
