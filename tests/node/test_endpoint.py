"""The full stack (TL + DL + PHY) between two Endpoints, driven by hand."""

from __future__ import annotations

import inspect
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.tl_model import Model, expect, issue, random_ops
from ualink_ref import Completion, Endpoint
from ualink_ref.errors import DecodeError, UALinkError
from ualink_ref.node.config import EndpointConfig, LinkConfig
from ualink_ref.node.linkend import decode_wire
from ualink_ref.phy import BitErrorChannel, encode_flits
from ualink_ref.phy.accel import use_compiled
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import SimConfig
from ualink_ref.tl import Status, TransactionLayer
from ualink_ref.tl.upli import Command


def _run(a: Endpoint, b: Endpoint, ber: float, seed: int, n_expected: tuple[int, int]) -> tuple[
    list[Completion], list[Completion]
]:
    ch = {"ab": BitErrorChannel(ber, seed), "ba": BitErrorChannel(ber, seed + 1)}
    got: tuple[list[Completion], list[Completion]] = ([], [])
    pipes: dict[str, list[tuple[int, bytes]]] = {"ab": [], "ba": []}
    now = 0
    while len(got[0]) < n_expected[0] or len(got[1]) < n_expected[1]:
        assert now < 200_000, f"stuck (seed {seed})"
        for src, name in ((a, "ab"), (b, "ba")):
            wire = src.poll(now)
            if wire is not None:
                pipes[name].append((now + 3, ch[name].apply(wire) if ber else wire))
        for dst, name in ((b, "ab"), (a, "ba")):
            out = got[0] if dst is a else got[1]
            while pipes[name] and pipes[name][0][0] <= now:
                events = dst.receive(pipes[name].pop(0)[1], now)
                out.extend(e for e in events if isinstance(e, Completion))
        now += 1
    return got


@pytest.mark.parametrize(("phy", "ber"), [("kp4", 1e-4), ("ll", 5e-5), ("none", 2e-5)])
def test_endpoint_pair_one_flit_per_slot(phy: str, ber: float) -> None:
    seed = {"kp4": 11, "ll": 12, "none": 13}[phy]
    rng = random.Random(seed)
    config = EndpointConfig.with_fec(phy)
    a, b = Endpoint(1, config=config), Endpoint(2, config=config)
    ops_a = random_ops(rng, 150, 0x4000, 2048)
    ops_b = random_ops(rng, 150, 0x9000, 2048)
    tags_a = [issue(a.tl, 2, op) for op in ops_a]
    tags_b = [issue(b.tl, 1, op) for op in ops_b]
    got_a, got_b = _run(a, b, ber, seed, (len(ops_a), len(ops_b)))
    for ops, tags, got, target in ((ops_a, tags_a, got_a, b), (ops_b, tags_b, got_b, a)):
        model = Model()
        by_tag = {c.handle: c for c in got}
        assert len(by_tag) == len(ops)
        for tag, op in zip(tags, ops, strict=True):
            want = expect(model, op)
            assert by_tag[tag] == Completion(tag, Status.OKAY, want), f"seed {seed}"
        for addr, value in model.mem.items():
            assert target.memory.peek(addr, 1)[0] == value
    c = a.counters
    assert c.flits_sent > 0 and c.wire_bytes_sent == c.flits_sent * a.wire_bytes_per_flit
    if phy != "none":
        assert c.fec_corrected_symbols > 0  # the channel really was noisy
    else:
        assert c.crc_errors + b.counters.crc_errors > 0 and c.replays + b.counters.replays > 0


def test_wire_sizes_and_bad_input() -> None:
    for phy, size in (("kp4", 680), ("ll", 680), ("none", 640)):
        ep = Endpoint(1, config=EndpointConfig.with_fec(phy))
        wire = ep.poll(0)  # the initial credit grant goes out at once
        assert wire is not None and len(wire) == size
        with pytest.raises(DecodeError):
            ep.receive(wire[:-1], 0)
    with pytest.raises(ValueError):
        Endpoint(1, config=EndpointConfig.with_fec("turbo"))
    with pytest.raises(ValueError):
        Endpoint(1, config=EndpointConfig(link=LinkConfig(phy=PhyConfig("kp4", 2))))


def test_ll_with_two_way_interleave() -> None:
    from ualink_ref.sim.link_run import simulate
    from ualink_ref.sim.workloads import random_workload

    report = simulate(random_workload(300, 2),
                      SimConfig(phy=PhyConfig(fec="ll", interleave=2), ber=1e-4, seed=2))
    assert report.ops_okay == 300 and report.data_mismatches == 0
    assert report.fec_corrected_symbols > 0


def test_quickstart_example() -> None:
    a, b = Endpoint(1), Endpoint(2)
    tag = a.write(2, 0x1000, b"hello, UALink!!!")
    read = a.read(2, 0x1000, 16)
    events = []
    for now in range(64):
        for src, dst in ((a, b), (b, a)):
            wire = src.poll(now)
            if wire is not None:
                got = dst.receive(wire, now)
                if dst is a:
                    events += [e for e in got if isinstance(e, Completion)]
    assert events == [Completion(tag, Status.OKAY, None),
                      Completion(read, Status.OKAY, b"hello, UALink!!!")]


@given(st.sampled_from(["kp4", "ll", "none"]), st.binary(min_size=0, max_size=700))
def test_receive_arbitrary_wire_bytes_raises_only_ualink_errors(phy: str, data: bytes) -> None:
    ep = Endpoint(1, config=EndpointConfig.with_fec(phy))
    try:
        ep.receive(data, 0)
    except UALinkError:
        return
    assert len(data) == ep.wire_bytes_per_flit  # accepted only whole flits
    assert ep.counters.flits_received == 1


@given(
    st.sampled_from(["kp4", "ll", "none"]),
    st.lists(
        st.one_of(
            st.binary(min_size=64, max_size=64),
            # valid-looking control halves: a known FTYPE in the top nibble of each field
            st.lists(st.integers(0, 0x6FFFFFFF), min_size=16, max_size=16).map(
                lambda words: b"".join(w.to_bytes(4, "big") for w in words)
            ),
        ),
        min_size=1,
        max_size=12,
    ),
)
def test_receive_framed_random_tl_flits_raises_only_ualink_errors(
    phy: str, tl_flits: list[bytes]
) -> None:
    # Wire bytes that pass FEC and the DL CRC and sequence checks, so the TL
    # really parses them (arbitrary wire bytes almost never get past the CRC).
    from ualink_ref.dl import DataLink
    from ualink_ref.phy import encode_flits

    ep = Endpoint(2, config=EndpointConfig.with_fec(phy))
    ep.read(1, 0x100, 64)
    ep.atomic(1, 0x200, "add", 1)
    ep.poll(0)  # grant credits, send the requests: tags and credits are live
    ep.poll(1)
    peer = DataLink()
    peer.send(tl_flits)
    try:
        for now in range(2, 10):
            flit = peer.poll(now)
            if flit is None:
                break
            ep.receive(flit if phy == "none" else encode_flits(flit, phy), now)
    except UALinkError:
        return
    assert ep.counters.tl_flits_received == len(tl_flits)  # the TL really saw them all


def test_upli_calls_are_the_transaction_layers_own() -> None:
    # One signature and docstring: the Endpoint's read / write / atomic are the TL's.
    for name in ("read", "write", "atomic"):
        ours, tls = getattr(Endpoint, name), getattr(TransactionLayer, name)
        assert ours.__wrapped__ is tls
        assert inspect.signature(ours) == inspect.signature(tls)
        assert ours.__doc__ == tls.__doc__
        assert ours.__module__ == Endpoint.__module__
    # ... run on the endpoint's own TL, every argument passed through.
    ep = Endpoint(1)
    tags = [ep.write(2, 0x40, bytes(8), 0xFF, vc=1, metadata=7),
            ep.read(3, 0x80, 128, vc=2, metadata=9),
            ep.atomic(4, 0xC0, "add", 5, None, 4, False, vc=3)]
    queued = [(op.handle, Command(op.cmd), op.dst, op.addr, op.vc, op.metadata)
              for op in ep.tl.queued_requests()]
    assert queued == [(tags[0], Command.WRITE, 2, 0x40, 1, 7),
                      (tags[1], Command.READ, 3, 0x80, 2, 9),
                      (tags[2], Command.ATOMIC_NR, 4, 0xC0, 3, 0)]


def test_upli_calls_run_what_the_endpoints_tl_runs() -> None:
    # Looked up on ep.tl at call time: whatever that TL's read is, is what runs. The
    # TL is swapped for a recording stand-in (a native TL's methods cannot be replaced).
    ep = Endpoint(1)
    seen: list[tuple[tuple[object, ...], dict[str, object]]] = []
    own_tl = ep.tl

    class Recording:
        def __getattr__(self, name: str) -> Any:
            return getattr(own_tl, name)

        def read(self, *args: Any, **kwargs: Any) -> int:
            seen.append((args, kwargs))
            tag: int = own_tl.read(*args, **kwargs)
            return tag

    ep.tl = Recording()  # type: ignore[assignment]
    tag = ep.read(2, 0x40, 64, vc=1)
    assert seen == [((2, 0x40, 64), {"vc": 1})] and own_tl.queued == 1 and tag == 0


@pytest.mark.parametrize("compiled", [True, False])
def test_decode_wire_counts_corrected_and_uncorrectable_codewords(compiled: bool) -> None:
    # Four KP4 flits (one codeword each): clean; 3 and 5 bytes hit (<= t = 15 symbols:
    # fixed); 64 bytes hit (far past t: flagged). Counts by construction: 2 and 1.
    flits = bytes(range(256)) * 10  # 2,560 bytes: four flits
    wire = bytearray(encode_flits(flits, "kp4"))
    per = len(wire) // 4
    for flit, hits in ((1, (5, 200, 400)), (2, (1, 90, 180, 270, 600)), (3, range(0, 640, 10))):
        for i in hits:
            wire[flit * per + i] ^= 0x5A
    with use_compiled(compiled):
        got = decode_wire(bytes(wire), "kp4")
    assert (got.codewords_corrected, got.codewords_uncorrectable) == (2, 1)
    assert got.corrected[0] == 0 and got.corrected[1] > 0 and got.corrected[2] > 0
    assert got.uncorrectable == (False, False, False, True)
    assert got.flits[:1920] == flits[:1920]
