"""The dissector's TL walk (``capture/dissect_tl.py``): framing from rule 3's bits alone, typed
fields read later from the kept control half-flits.

Oracles: ``tl.framing.data_halves`` over ``tl.codec.decode_control_half`` (the typed path
the TL engine uses) for the framing, and the same fields read in either order for the
lazy ``tl_fields`` / ``tl_ways``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.capture.dissect import DissectedFlit, dissect_records
from ualink_ref.capture.dissect_tl import RULE3_READS, owed_after
from ualink_ref.capture.format import read_capture
from ualink_ref.capture.run import capture_simulation
from ualink_ref.errors import DecodeError
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.workloads import random_workload
from ualink_ref.testing.strategies import tl_fields, tl_stream_halves
from ualink_ref.tl import codec as C
from ualink_ref.tl.framing import data_halves


def _outcome(call: Any, *args: Any) -> tuple[str, object]:
    """What ``call(*args)`` gives: ``("value", v)`` or ``("error", (type, text))``."""
    try:
        return "value", call(*args)
    except DecodeError as exc:
        return "error", (type(exc), str(exc))


def _random_field(ftype: int) -> st.SearchStrategy[C.TLField]:
    """A field of ``ftype`` with any bits (unknown commands included)."""
    bits = 8 * C.SECTORS_OF[ftype] * 4
    return st.integers(0, 2 ** (bits - 4) - 1).map(
        lambda low: C.unpack_word(ftype, ftype << (bits - 4) | low))


CAPTURES = Path(__file__).resolve().parents[2] / "vectors" / "captures"
KNOWN_FTYPES = [ft for ft in range(16) if C.SECTORS_OF[ft]]
ANY_FIELD = st.one_of(
    st.sampled_from(KNOWN_FTYPES).flatmap(_random_field),
    tl_fields().map(lambda fv: C.from_dict(fv[0], fv[1])),  # modelled commands: data owed
)


@given(ANY_FIELD, st.data())
def test_data_halves_reads_only_the_declared_fields(a: C.TLField, data: st.DataObject) -> None:
    # Two fields of one class that agree on the declared fields get the same answer from
    # rule 3 (count or error), whatever their other fields hold.
    b = data.draw(_random_field(C.FTYPE_OF[type(a)]))
    mixed = b._replace(**{name: getattr(a, name) for name in RULE3_READS.get(type(a), ())})
    assert type(mixed) is type(a)
    assert _outcome(data_halves, mixed) == _outcome(data_halves, a), (a, mixed)


def test_the_declared_fields_do_decide_rule_3() -> None:
    # Not vacuous: changing a declared field changes the count.
    read = C.CompressedRequest(cmd=0x29, vchan=0, tag=0, pool=0, attr=0, len=15, cway=0,
                               numbeats=0, addr_lo=0)  # WriteFull, one beat: 2 halves
    assert data_halves(read) == 2 and data_halves(read._replace(numbeats=1)) == 4
    rsp = C.CompressedResponseData(vchan=0, tag=1, pool=0, len=1)
    assert data_halves(rsp) == 4 and data_halves(rsp._replace(len=0)) == 2


@given(tl_stream_halves())
def test_owed_after_is_rule_3_over_the_decoded_fields(half: bytes) -> None:
    def typed(h: bytes) -> tuple[int, bool]:
        found = C.decode_control_half(h)
        return (sum(data_halves(v) for _, v in found),
                any(type(v) is C.Request for _, v in found))

    assert _outcome(owed_after, half) == _outcome(typed, half)


def test_owed_after_counts_a_write_and_names_an_uncompressed_request() -> None:
    write = C.pack_field(C.Request(cmd=0x28, vchan=0, asi=0, tag=3, pool=0, attr=0, len=0,
                                   metadata=0, addr=0x1000, src_acc=0, dst_acc=0, cload=1,
                                   cway=2, numbeats=0))  # Write: byte enables + 1 beat
    assert owed_after(write + bytes(32 - len(write))) == (3, True)
    assert owed_after(bytes(32)) == (0, False)
    with pytest.raises(DecodeError):
        owed_after(bytes([0x70]) + bytes(31))  # FTYPE 7: unknown


@pytest.mark.parametrize("first", ["tl_fields", "tl_ways"])
def test_typed_fields_and_ways_read_in_either_order(first: str) -> None:
    # addresses above 2**24, so address-cache ways hold non-zero bits
    records, _ = capture_simulation(random_workload(60, 4, base=0x1234_5678_9000),
                                    SimConfig(phy=PhyConfig(fec="kp4"), ber=0.0, seed=4))
    reference = [(f.tl_fields, f.tl_ways) for f in dissect_records(records)]
    again = dissect_records(records)
    for f in again:
        getattr(f, first)
    assert [(f.tl_fields, f.tl_ways) for f in again] == reference
    assert any(w is not None for _, ways in reference for w in ways)  # a loaded way used
    assert sum(len(fields) for fields, _ in reference) > 100


def test_a_dissected_flit_equals_one_built_by_its_constructor() -> None:
    # The dissector hands each DissectedFlit its instance dict (defaults read from the
    # class): the value is the one the frozen dataclass's __init__ would build.
    # (every path: CRC errors, gaps, duplicates, unsynchronised, FEC-only, no TL bytes)
    flits = dissect_records(read_capture(CAPTURES / "fec_codewords.pcapng"))
    for f in flits:
        built = DissectedFlit(**{x.name: getattr(f, x.name) for x in dataclasses.fields(f)})
        assert built == f and hash(built) == hash(f) and repr(built) == repr(f)
        assert dataclasses.replace(f) == f
    assert {f.status for f in flits} == {"accepted", "", "unsynchronised", "gap", "duplicate"}
    assert any(f.crc_error for f in flits) and any(f.fec_only for f in flits)
