"""atheris harness: a DataLink receiver fed arbitrary flits (stateful; must never raise)."""

from __future__ import annotations

import atheris
from _harness import flits_with_crc, main, with_mode

with atheris.instrument_imports():
    from ualink_ref.dl import DataLink, DLFlit
    from ualink_ref.dl.formats import FlitOp


def DECODE(data: bytes) -> object:
    """Split the input into 640-byte flits and feed them to one receiver."""
    link = DataLink()
    events = []
    for i in range(0, max(len(data), 1), 640):
        events += link.receive(data[i : i + 640], float(i))
        link.poll(float(i))
    return events


SEEDS = [DLFlit(FlitOp.EXPLICIT, flit_seq=1, tl=bytes(64)).encode()]


#: Structured mode: every flit's CRC repaired, so the sequence and replay logic runs.
FIXUP = flits_with_crc
_RUN = with_mode(DECODE, FIXUP)


def TestOneInput(data: bytes) -> None:
    """DataLink.receive reports bad input as events: any exception is a crash."""
    _RUN(data)


if __name__ == "__main__":
    main(TestOneInput)
