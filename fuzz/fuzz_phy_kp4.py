"""atheris harness: RS(544,514) wire bytes back into flits."""

from __future__ import annotations

import atheris
from _harness import flits_with_crc, main, only_decode_errors

with atheris.instrument_imports():
    from ualink_ref.phy import decode_flits, encode_flits



def DECODE(wire: bytes) -> object:
    """Decode the wire bytes."""
    return decode_flits(wire, "kp4")


#: Valid inputs: a starting corpus, and a check that the harness targets the right decoder.
SEEDS = [encode_flits(bytes(640), "kp4"), encode_flits(bytes(range(256)) * 5, "kp4")]


def FIXUP(data: bytes) -> bytes:
    """Structured mode: valid codewords of the flits in the first bytes (CRC repaired),
    then a few symbol errors placed by the input's tail, so the decoder's correction
    path runs on real codewords (raw bytes are almost always uncorrectable)."""
    flits = flits_with_crc(data[:1280])
    wire = bytearray(encode_flits(flits, "kp4"))
    tail = data[1280:]
    for i in range(0, min(len(tail), 64) - 1, 2):
        wire[(tail[i] << 8 | tail[i + 1]) % len(wire)] ^= tail[i] | 1
    return bytes(wire)


TestOneInput = only_decode_errors(DECODE, FIXUP)

if __name__ == "__main__":
    main(TestOneInput)
