"""TransactionLayer rules pinned at their boundaries, from the mutants a mutmut run left alive.

Only the public surface is used (``read`` / ``write`` / ``atomic``, ``poll``,
``receive``, ``fail_outstanding``, the state properties and counters), with the
peer played by hand through ``tests/tl_peer.py`` — so these tests hold across a
restructuring of the engine's internals. The mutation run, its sample and the
survival rates are in ``fuzz/README.md``, "Mutation testing".
"""

from __future__ import annotations

import pytest
from tl_peer import drain, flits, grant_all, halves, ok_response, requests_in

from ualink_ref.errors import TruncatedError
from ualink_ref.tl import Status, TransactionLayer
from ualink_ref.tl.codec import FlowControl, Request
from ualink_ref.tl.events import Completion, LinkFailed
from ualink_ref.tl.framing import TLDeframer
from ualink_ref.tl.limits import TLLimits


def _read(tag: int, src: int = 1, dst: int = 2, addr: int = 0x100) -> Request:
    return Request(cmd=0x03, vchan=0, asi=0, tag=tag, pool=1, attr=0, len=0, metadata=0,
                   addr=addr >> 2, src_acc=src, dst_acc=dst, cload=0, cway=0, numbeats=0)


def _returned(sent: list[bytes]) -> list[int]:
    """Pool credits (req_cmd, rsp_cmd, req_data, rsp_data) returned in ``sent``, summed."""
    walk = TLDeframer()
    total = [0, 0, 0, 0]
    for flit in sent:
        for half in (flit[:32], flit[32:]):
            started, _ = walk.feed_half(half)
            for p in started:
                if isinstance(p.value, FlowControl):
                    for i, v in enumerate((p.value.req_cmd, p.value.rsp_cmd,
                                           p.value.req_data, p.value.rsp_data)):
                        total[i] += v
    return total


def _backed_up(waiting: int) -> TransactionLayer:
    """A completer (acc 2) holding one response it cannot send (the peer granted no
    response credits) and ``waiting`` received reads waiting behind it (rule 7 / B1)."""
    tl = TransactionLayer(2, compress=False, limits=TLLimits(max_responses=1))
    drain(tl)  # its initial grant goes to the peer
    reads = [_read(t) for t in range(1 + waiting)]
    for flit in flits([h for i in range(0, len(reads), 2) for h in halves(reads[i:i + 2])]):
        tl.receive(flit)
    assert tl.responses_queued == 1 and tl.requests_waiting == waiting
    return tl


@pytest.mark.parametrize("waiting", [1, 3])
def test_a_link_fault_returns_the_credits_of_requests_waiting_to_be_served(waiting: int
                                                                         ) -> None:
    # Rule 7 / B1: a request waiting for room holds its request credits; when the link
    # under the TL fails (fail_outstanding) they are given back, not leaked.
    tl = _backed_up(waiting)
    drain(tl)
    assert tl.fail_outstanding(Status.DATA_ERROR) == []  # nothing of its own outstanding
    assert tl.requests_waiting == 0 and tl.responses_queued == 0
    returned = _returned(drain(tl))
    # the served request's credit was returned when it executed; the waiting ones now
    assert returned[0] == waiting


def test_an_undecodable_half_flit_drops_the_waiting_requests_without_raising() -> None:
    # Rule 6 (E7): the link fails; requests waiting to be served are dropped whole.
    tl = _backed_up(2)
    events = tl.receive(bytes([0xF0]) + bytes(63))  # FTYPE 15: cannot be framed
    assert [type(e) for e in events] == [LinkFailed]
    assert tl.requests_waiting == 0 and tl.failed is not None
    assert tl.poll() is None


def test_every_queued_and_outstanding_operation_fails_once_oldest_first() -> None:
    tl = TransactionLayer(1, compress=False)
    drain(tl)
    grant_all(tl, count=1)  # one request credit: one read goes out, the rest queue
    handles = [tl.read(2, 0x100 * i, 64) for i in range(3)]
    drain(tl)
    assert (tl.outstanding, tl.queued) == (1, 2)
    done = tl.fail_outstanding(Status.DATA_ERROR)
    assert [(c.handle, c.status) for c in done] == [(h, Status.DATA_ERROR) for h in handles]
    assert (tl.outstanding, tl.queued, tl.busy) == (0, 0, False)
    assert tl.fail_outstanding(Status.DATA_ERROR) == []


@pytest.mark.parametrize("flit", [object(), "x" * 64, 3.0, None, [0] * 64])
def test_receive_of_anything_but_64_bytes_is_a_truncated_error_naming_the_tl_flit(
        flit: object) -> None:
    tl = TransactionLayer(1)
    with pytest.raises(TruncatedError) as info:
        tl.receive(flit)  # type: ignore[arg-type]
    assert info.value.what.startswith("TL flit") and info.value.expected == 64
    assert info.value.actual == -1  # not a byte buffer at all: no length to report


def test_receive_of_a_wide_item_buffer_is_a_truncated_error() -> None:
    import array

    tl = TransactionLayer(1)
    with pytest.raises(TruncatedError) as info:
        tl.receive(array.array("H", [0] * 32))  # 64 bytes, but 2-byte items
    assert info.value.what == "TL flit (bytes)" and info.value.expected == 64
    assert info.value.actual == -1


@pytest.mark.parametrize("size", [63, 65, 0])
def test_receive_of_a_byte_buffer_of_the_wrong_length(size: int) -> None:
    tl = TransactionLayer(1)
    with pytest.raises(TruncatedError) as info:
        tl.receive(bytearray(size))
    assert (info.value.expected, info.value.actual) == (64, size)


def test_a_response_completes_its_read_with_the_data_and_frees_its_tag() -> None:
    tl = TransactionLayer(1, compress=False)
    drain(tl)
    grant_all(tl)
    handle = tl.read(2, 0x100, 8)
    [req] = requests_in(drain(tl))
    data = bytes(range(32)) * 2
    events = [e for f in flits(halves([ok_response(req, beats=1)], [data[:32], data[32:]]))
              for e in tl.receive(f)]
    assert events == [Completion(handle, Status.OKAY, data[:8])]
    assert tl.outstanding == 0 and not tl.busy
