"""The dissector's fast TL walk against the readable path, kept here as the oracle.

Since issue 12 the dissector frames TL flits with a count of owed data half-flits and
reads fields with the typed codec, building the readable views
(:func:`ualink_ref.tl.flit.dissect`, ``ControlField`` dicts) only when asked. The
oracle below is the rule as it was before: every TL flit dissected by the readable
path with the pending count carried from the previous view, and ops and credits read
from the views' field dicts. Both must agree on which TL flits dissect, the data
half-flits owed before each, every op (with its values) and every credit return.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ualink_ref.capture.dissect import DissectedFlit, dissect_records
from ualink_ref.capture.format import CaptureRecord, read_capture
from ualink_ref.capture.run import capture_simulation
from ualink_ref.dl import DLFlit
from ualink_ref.dl.formats import FlitOp
from ualink_ref.errors import DecodeError
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.workloads import random_workload
from ualink_ref.testing.strategies import dl_flits, tl_stream_halves
from ualink_ref.tl.codec import ADDR_LO_BITS
from ualink_ref.tl.fields import COMMANDS, FType
from ualink_ref.tl.flit import TLFlitView, dissect

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = [*sorted((ROOT / "vectors" / "captures").glob("*.pcap*")),
            Path(__file__).resolve().parent / "data" / "dissect_pinned.pcap"]

_RESPONSES = (FType.RESPONSE, FType.COMPRESSED_RESPONSE_DATA, FType.COMPRESSED_RESPONSE_NODATA)


def _oracle_ops(view: TLFlitView, ways: list[int | None]) -> tuple[list[Any], list[str]]:
    """Ops and credit returns of one readable view (the dissector's rule before issue 12)."""
    ops: list[Any] = []
    credits: list[str] = []
    for half in view.halves:
        for f in half.fields:
            ft = f.ftype
            v = dict(f.values)
            if ft == FType.REQUEST and v["cload"]:
                ways[v["cway"]] = (v["addr"] << 2) >> ADDR_LO_BITS
            if ft == FType.COMPRESSED_REQUEST and ways[v["cway"]] is not None:
                v["addr"] = ((ways[v["cway"]] or 0) << ADDR_LO_BITS | v["addr_lo"] << 2) >> 2
            if ft in (FType.REQUEST, FType.COMPRESSED_REQUEST):
                ops.append(("request", COMMANDS.get(v["cmd"], f"cmd{v['cmd']:#04x}"), v["tag"], v))
            elif ft in _RESPONSES:
                ops.append(("response", "Response", v["tag"], v))
            elif ft in (FType.FLOW_CONTROL, FType.VC_FLOW_CONTROL) and not f.is_nop:
                parts = [f"{k}+{v[k]}" for k in ("req_cmd", "rsp_cmd", "req_data", "rsp_data")
                         if v.get(k)]
                vc = f"vc{v['vchan']} " if ft == FType.VC_FLOW_CONTROL else ""
                credits.append(vc + " ".join(parts))
    return ops, credits


def _check_against_oracle(flits: list[DissectedFlit]) -> int:
    """Assert the oracle agrees on every flit; return the number of TL flits compared."""
    state: dict[tuple[str, int], tuple[int, list[int | None]]] = {}
    compared = 0
    for f in flits:
        key = (f.direction, f.record.port)
        owed, ways = state.get(key, (0, [None, None, None, None]))
        # where the DL rules made the dissector drop the TL stream held so far
        if any(n.startswith("synchronised") or "phase mismatch" in n for n in f.notes):
            owed = 0
        framed: list[int | None] = []
        ops: list[Any] = []
        credits: list[str] = []
        for raw in f.tl_raw:
            try:
                view = dissect(raw, owed)
            except DecodeError:
                framed.append(None)
                owed = 0  # the stream resynchronises at the next TL flit
                continue
            framed.append(owed)
            owed = view.pending_after
            o, c = _oracle_ops(view, ways)
            ops += o
            credits += c
        state[key] = (owed, ways)
        where = (f.index, f.direction, f.record.port)
        assert f.tl_owed == tuple(framed), where
        assert [(op.kind, op.command, op.tag, op.values) for op in f.ops] == ops, where
        assert list(f.credits) == credits, where
        assert f.tl_flits == tuple(dissect(raw, n) for raw, n in zip(f.tl_raw, framed,
                                                                     strict=True)
                                   if n is not None), where
        compared += len(f.tl_raw)
    return compared


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_committed_captures_agree_with_the_readable_path(path: Path) -> None:
    assert _check_against_oracle(dissect_records(read_capture(path))) > 0


@pytest.mark.parametrize("cut", [0, 3, 17])
def test_noisy_runs_cut_mid_stream_agree_with_the_readable_path(cut: int) -> None:
    # addresses above 2**24, so address-cache ways hold non-zero bits
    records, _ = capture_simulation(random_workload(120, 4, base=0x1234_5678_9000),
                                    SimConfig(phy=PhyConfig(fec="kp4"), ber=3e-4, seed=4))
    flits = dissect_records(records[cut:])
    assert _check_against_oracle(flits) > 0
    if cut == 0:  # a compressed request used a loaded way (cut later: loads may be cut off)
        assert any(op.way for f in flits for op in f.ops)


#: Half-flits for TL streams (valid control halves, odd sectors, arbitrary bytes).
HALVES = tl_stream_halves()


@st.composite
def tl_stream_records(draw: Any) -> list[CaptureRecord]:
    """Consecutive data flits (sequence 1, 2, ...) of any legal TL layout, carrying a TL
    stream of the half-flits above, so TL flits span DL flits and data is owed across."""
    records = []
    for i in range(draw(st.integers(1, 5))):
        layout = draw(dl_flits(payload=True))
        size = len(layout.tl)
        halves = draw(st.lists(HALVES, min_size=(size + 31) // 32, max_size=(size + 31) // 32))
        flit = DLFlit(FlitOp.EXPLICIT, flit_seq=i + 1, tl=b"".join(halves)[:size],
                      first_tl_start=layout.first_tl_start, messages=layout.messages)
        records.append(CaptureRecord(data=flit.encode(), kind="dl_flit", direction="a_to_b",
                                     fec_mode="kp4", slot=i))
    return records


@settings(deadline=None)
@given(tl_stream_records())
def test_any_tl_stream_agrees_with_the_readable_path(records: list[CaptureRecord]) -> None:
    _check_against_oracle(dissect_records(records))
