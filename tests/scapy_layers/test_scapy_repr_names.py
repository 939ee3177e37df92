"""Every layer name a repr of a dissected capture shows can be imported from
``ualink_ref.scapy_layers`` (``<TlRequest ...>``: ``from ualink_ref.scapy_layers import
TlRequest``), and its instances pickle."""

from __future__ import annotations

import pickle
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("scapy", reason="scapy is not installed (the `scapy` extra)")

from scapy.packet import NoPayload, Packet, raw
from scapy.utils import rdpcap

import ualink_ref.scapy_layers as sl

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted((ROOT / "vectors" / "captures").glob("*.pcap*"))


def layers_in(pkt: Packet) -> Iterator[Packet]:
    """``pkt`` and every layer inside it: its payload chain and every packet-valued field
    (as repr() reaches them: the DL flit's ``tl_flits`` view and each span's TL flit
    are computed when read, as repr() reads them)."""
    stack = [pkt]
    while stack:
        p = stack.pop()
        if isinstance(p, NoPayload):
            continue
        yield p
        for f in p.fields_desc:
            value = p.getfieldval(f.name)
            stack += [v for v in (value if isinstance(value, list) else [value])
                      if isinstance(v, Packet)]
        stack.append(p.payload)


def shown_classes() -> dict[type[Packet], Packet]:
    """Every layer class reprs of the committed captures show, with one instance of it:
    the records as ``rdpcap`` reads them, and their TL flits as ``reassemble_tl`` gives
    them (``list_requests`` gives fields of those same flits). The pcapng capture is not
    reassembled: its TL flits are layers of the same classes (a few seconds saved)."""
    found: dict[type[Packet], Packet] = {}
    for path in CAPTURES:
        packets = rdpcap(str(path))
        roots: list[Packet] = list(packets)
        if path.suffix != ".pcapng":
            roots += [t.flit for t in sl.reassemble_tl(packets)]
        for root in roots:
            text = repr(root)
            for layer in layers_in(root):
                assert f"<{type(layer).__name__} " in text  # the walk finds what repr shows
                found.setdefault(type(layer), layer)
    return found


def not_importable(namespace: Any, classes: set[type[Packet]]) -> set[str]:
    """Names of ``classes`` (ours, not Scapy's) that ``namespace`` does not offer as that
    class (or, for a TL flit continuing owed data, the class it is made from)."""
    missing = set()
    for cls in classes:
        if cls.__module__.startswith("scapy."):  # Scapy's own (Raw): from its module
            assert getattr(sys.modules[cls.__module__], cls.__name__) is cls
            continue
        offered = getattr(namespace, cls.__name__, None)
        if not (isinstance(offered, type) and issubclass(cls, offered)):
            missing.add(cls.__name__)
    return missing


@pytest.fixture(scope="module")
def shown() -> dict[type[Packet], Packet]:
    return shown_classes()


def test_every_layer_name_in_a_repr_is_importable_from_scapy_layers(
        shown: dict[type[Packet], Packet]) -> None:
    names = {cls.__name__ for cls in shown}
    # the layers a user meets first are among them (the walk reaches the TL fields)
    assert {"UALinkCapture", "UALinkDLFlit", "DLSegment0", "DLTLSpan", "TLFlit",
            "TLControlHalf", "TLDataHalf", "TlRequest", "TlCompressedRequest",
            "TlCompressedResponseNoData", "TlFlowControl"} <= names
    assert not not_importable(sl, set(shown))
    for name in names - {"Raw"}:
        assert name in sl.__all__, name


def test_a_name_left_out_is_caught(shown: dict[type[Packet], Packet]) -> None:
    # Seeded bug: scapy_layers without TlRequest (as before it was exported).
    without = SimpleNamespace(**{n: getattr(sl, n) for n in sl.__all__ if n != "TlRequest"})
    assert not_importable(without, set(shown)) == {"TlRequest"}


def test_every_shown_layer_pickles(shown: dict[type[Packet], Packet]) -> None:
    for cls, layer in shown.items():
        back = pickle.loads(pickle.dumps(layer))
        assert type(back).__name__ == cls.__name__ and raw(back) == raw(layer), cls
        assert getattr(back, "pending_before", 0) == getattr(layer, "pending_before", 0)


def test_every_generated_layer_is_exported_under_its_own_name() -> None:
    # Also the layers no committed capture happens to show (a DL message type, ...).
    generated = [*sl.TL_FIELD_LAYERS.values(), *sl.DL_MESSAGE_LAYERS.values(),
                 *sl.DL_SEGMENT_LAYERS, sl.DlMsgVendor]
    for cls in generated:
        assert getattr(sl, cls.__name__) is cls and cls.__name__ in sl.__all__
        assert cls.__module__ == "ualink_ref.scapy_layers"
