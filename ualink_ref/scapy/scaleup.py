"""Build every SUE / UET frame of a mapped operation as bytes, and read each one back.

:func:`build_mapping` turns a :class:`ualink_ref.compare.sue_uet.Mapping` into
frames (Scapy layers from :mod:`ualink_ref.scapy.sue` / :mod:`ualink_ref.scapy.uet`,
payload bytes, padding to the 64-byte minimum, 802.3 FCS).
:func:`read_back` parses a frame with the same layers and returns the field
values of every SUE/UET header found, and :func:`count_mapping` counts only
frames that read back to the values they were built from (and whose length
equals the size table's). This module imports Scapy and is loaded on demand.
"""

from __future__ import annotations

import zlib
from functools import lru_cache
from typing import Any

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet as ScapyPacket
from scapy.packet import Raw

from ualink_ref.compare import sue_uet as M
from ualink_ref.compare.mapping import CompareOp
from ualink_ref.scapy import sue as scapy_sue
from ualink_ref.scapy import uet as scapy_uet
from ualink_ref.scapy.gen import scapy_name
from ualink_ref.scapy.roce import FrameCount

__all__ = ["build_frame", "build_mapping", "count_mapping", "count_op", "read_back"]

LAYERS: dict[str, Any] = {**scapy_sue.LAYERS, **scapy_uet.LAYERS}
_MAC = {"fwd": ("02:00:00:00:00:01", "02:00:00:00:00:02"),
        "rev": ("02:00:00:00:00:02", "02:00:00:00:00:01")}
_IP4 = {"fwd": ("10.0.0.1", "10.0.0.2"), "rev": ("10.0.0.2", "10.0.0.1")}


def _layers(pkt: M.Packet) -> ScapyPacket:
    out: ScapyPacket | None = None
    for name, values in pkt.headers:
        layer = LAYERS[name](**{scapy_name(k): v for k, v in values})
        out = layer if out is None else out / layer
    assert out is not None
    return out


def build_frame(pkt: M.Packet, mapping: M.Mapping) -> bytes:
    """Frame bytes (first header byte .. FCS) of one packet of ``mapping``."""
    port = M.UET_UDP_PORT if mapping.protocol == "uet" else M.SUE_UDP_PORT
    body = _layers(pkt)
    if mapping.network == "afh":
        frame: ScapyPacket = scapy_sue.SueAfh(afh_tag=0xAF, dst_xpu=2 if pkt.direction == "fwd"
                                              else 1, src_xpu=1 if pkt.direction == "fwd"
                                              else 2) / body
    else:
        src, dst = _MAC[pkt.direction]
        s, d = _IP4[pkt.direction]
        frame = Ether(src=src, dst=dst) / IP(src=s, dst=d, flags="DF") / UDP(
            sport=49152, dport=port) / body
    if pkt.payload:
        frame = frame / Raw(bytes(i & 0xFF for i in range(pkt.payload)))
    raw = bytes(frame)
    raw += bytes(max(0, M.MIN_FRAME - 4 - len(raw)))
    return raw + zlib.crc32(raw).to_bytes(4, "little")


def read_back(frame: bytes, mapping: M.Mapping) -> list[tuple[str, dict[str, int]]]:
    """Parse ``frame`` (FCS checked) and return every SUE/UET header's fields, in order."""
    body, fcs = frame[:-4], frame[-4:]
    if zlib.crc32(body).to_bytes(4, "little") != fcs:
        raise ValueError("FCS mismatch")
    parsed = scapy_sue.SueAfh(body) if mapping.network == "afh" else Ether(body)
    by_cls = {cls: name for name, cls in LAYERS.items()}
    out = []
    layer: Any = parsed
    while layer is not None and not isinstance(layer, (Raw,)) and layer.name != "NoPayload":
        name = by_cls.get(type(layer))
        if name is not None and not (name == "sue_afh" and mapping.network == "afh"
                                     and layer is parsed):
            fmt = M.BY_NAME[name]
            out.append((name, {f: int(getattr(layer, scapy_name(f))) for f in fmt.field_names}))
        layer = layer.payload if layer.payload else None
    return out


def _expected(pkt: M.Packet) -> list[tuple[str, dict[str, int]]]:
    out = []
    for name, values in pkt.headers:
        fmt = M.BY_NAME[name]
        d = {f: fmt.field(f).default for f in fmt.field_names}
        d.update(dict(values))
        out.append((name, d))
    return out


def build_mapping(mapping: M.Mapping) -> list[tuple[M.Packet, bytes]]:
    """Every packet of ``mapping`` with its frame, each read back and size-checked.

    Raises ``AssertionError`` if a frame does not parse back to the values it
    was built from or its length differs from the size table's.
    """
    out = []
    for pkt in mapping.packets:
        frame = build_frame(pkt, mapping)
        got, want = read_back(frame, mapping), _expected(pkt)
        if got != want:
            raise AssertionError(f"{mapping.protocol} {pkt.name}: read back {got} != {want}")
        if len(frame) != M.frame_bytes(pkt, mapping.network):
            raise AssertionError(f"{mapping.protocol} {pkt.name}: {len(frame)} bytes built, "
                                 f"table says {M.frame_bytes(pkt, mapping.network)}")
        out.append((pkt, frame))
    return out


def count_mapping(mapping: M.Mapping) -> FrameCount:
    """Bytes of the frames built (and read back) for ``mapping``, per direction."""
    counts = {"fwd": [0, 0], "rev": [0, 0]}
    for pkt, frame in build_mapping(mapping):
        counts[pkt.direction][0] += 1
        counts[pkt.direction][1] += len(frame)
    return FrameCount(counts["fwd"][0], counts["rev"][0], counts["fwd"][1], counts["rev"][1])


@lru_cache(maxsize=512)
def count_op(op: CompareOp, protocol: str, pmtu: int) -> FrameCount:
    """:func:`count_mapping` of ``op`` on ``protocol``, cached (the mix repeats six ops)."""
    return count_mapping(M.map_op(op, protocol, pmtu))
