"""atheris harness: one 4-byte DL message word."""

from __future__ import annotations

import atheris
from _harness import main, only_decode_errors

with atheris.instrument_imports():
    from ualink_ref.dl import DeviceId, decode_message, encode_message

DECODE = decode_message
#: Valid inputs: a starting corpus, and a check that the harness targets the right decoder.
SEEDS = [encode_message(DeviceId(True, 0x1234)), bytes(4)]
TestOneInput = only_decode_errors(DECODE)

if __name__ == "__main__":
    main(TestOneInput)
