"""atheris harness: the Scapy layers on one arbitrary link-type-147 record, as rdpcap sees it.

Scapy's reader turns the record into layers (``UALinkCapture`` and what it
dispatches to); ``show()`` and ``summary()`` must print them and the
reassembly helpers may raise only ``DecodeError``. Needs the ``scapy`` extra.
"""

from __future__ import annotations

import io

import atheris
from _harness import fix_record, main, only_decode_errors

with atheris.instrument_imports():
    from scapy.utils import PcapReader

    import ualink_ref.scapy_layers as sl
    from ualink_ref.capture.format import CaptureRecord, RawPacket, encode_pcap


def DECODE(data: bytes) -> str:
    """Read ``data`` as the one record of a pcap with Scapy, print it, list its requests."""
    packets = list(PcapReader(io.BytesIO(encode_pcap([RawPacket(0, data)]))))
    text = "".join(p.show(dump=True) + p.summary() for p in packets)
    sl.list_requests(packets)
    return text


SEEDS = [CaptureRecord(bytes(640)).encode(),
         CaptureRecord(bytes(680), "fec_codewords").encode()]
FIXUP = fix_record  # structured mode: a record Scapy reads past its header checks
TestOneInput = only_decode_errors(DECODE, FIXUP)

if __name__ == "__main__":
    main(TestOneInput)
