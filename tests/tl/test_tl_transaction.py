"""TransactionLayer rules pinned at their boundaries, from the mutants a mutmut run left alive.

Only the public surface is used (``read`` / ``write`` / ``atomic``, ``poll``,
``receive``, ``fail_outstanding``, the state properties and counters), with the
peer played by hand through ``tests/helpers/tl_peer.py`` — so these tests hold across a
restructuring of the engine's internals. The mutation run, its sample and the
survival rates are in ``fuzz/README.md``, "Mutation testing".
"""

from __future__ import annotations

import pytest

from tests.helpers.tl_peer import drain, flits, grant_all, halves, ok_response, requests_in
from ualink_ref.errors import (
    AddressCacheError,
    EncodeError,
    FieldRangeError,
    MisroutedError,
    ResponseMismatchError,
    TagError,
    TruncatedError,
)
from ualink_ref.tl import Status, TransactionLayer
from ualink_ref.tl.codec import CompressedRequest, FlowControl, Request
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion, FieldRejected, LinkFailed
from ualink_ref.tl.framing import TLDeframer
from ualink_ref.tl.limits import TLLimits


def _read(tag: int, src: int = 1, dst: int = 2, addr: int = 0x100) -> Request:
    return Request(cmd=0x03, vchan=0, asi=0, tag=tag, pool=1, attr=0, len=0, metadata=0,
                   addr=addr, src_acc=src, dst_acc=dst, cload=0, cway=0, numbeats=0)


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
    tl = TransactionLayer(2, config=TLConfig(compress=False, limits=TLLimits(max_responses=1)))
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
    tl = TransactionLayer(1, config=TLConfig(compress=False))
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
    assert (info.value.what, info.value.expected, info.value.actual) == ("TL flit", 64, size)


def test_a_response_completes_its_read_with_the_data_and_frees_its_tag() -> None:
    tl = TransactionLayer(1, config=TLConfig(compress=False))
    drain(tl)
    grant_all(tl)
    handle = tl.read(2, 0x100, 8)
    [req] = requests_in(drain(tl))
    data = bytes(range(32)) * 2
    events = [e for f in flits(halves([ok_response(req, beats=1)], [data[:32], data[32:]]))
              for e in tl.receive(f)]
    assert events == [Completion(handle, Status.OKAY, data[:8])]
    assert tl.outstanding == 0 and not tl.busy


def _byte_enables(tl: TransactionLayer) -> list[int]:
    """The byte-enable masks of the partial writes ``tl`` sends now (first data half)."""
    walk = TLDeframer()
    masks = []
    for flit in drain(tl):
        for half in (flit[:32], flit[32:]):
            _, done = walk.feed_half(half)
            masks += [int.from_bytes(p.data[0], "little") for p in done
                      if isinstance(p.value, Request) and p.value.cmd == 0x28]
    return masks


def test_byte_enables_as_a_mask_or_as_flags_including_none_at_all() -> None:
    # A Write (0x28) writes byte i when bit i of the mask (or flag i) is set; a mask of 0
    # is a legal write of nothing, the largest legal mask has one bit per byte.
    tl = TransactionLayer(1, config=TLConfig(compress=False))
    drain(tl)
    grant_all(tl)
    tl.write(2, 0x100, bytes(8), byte_enable=0)
    tl.write(2, 0x100, bytes(8), byte_enable=[1, 0, 1, 0, 0, 0, 0, 1])
    tl.write(2, 0x100, bytes(8), byte_enable=0xFF)
    assert _byte_enables(tl) == [0, 0b10000101, 0xFF]


@pytest.mark.parametrize("mask", [0x100, -1])
def test_a_byte_enable_mask_wider_than_the_data_is_an_encode_error(mask: int) -> None:
    tl = TransactionLayer(1)
    with pytest.raises(EncodeError) as info:
        tl.write(2, 0x100, bytes(8), byte_enable=mask)
    assert info.value.field == "byte_enable"
    assert tl.queued == 0


@pytest.mark.parametrize(("size", "operand", "ok"), [
    (4, -(2**31), True), (4, -(2**31) - 1, False), (4, 2**32 - 1, True), (4, 2**32, False),
    (8, -(2**63), True), (8, -(2**63) - 1, False), (8, 2**64 - 1, True), (8, 2**64, False),
])
def test_atomic_operands_fit_their_size_signed_or_unsigned(size: int, operand: int,
                                                           ok: bool) -> None:
    # specs/upli.md: operands are unsigned or signed integers that fit in `size` bytes.
    tl = TransactionLayer(1)
    if ok:
        tl.atomic(2, 0x100, "add", operand, size=size)
        assert tl.queued == 1
    else:
        with pytest.raises(EncodeError) as info:
            tl.atomic(2, 0x100, "add", operand, size=size)
        assert info.value.field == "operand" and tl.queued == 0


@pytest.mark.parametrize("op", ["nand", 10, -1])
def test_an_unknown_atomic_op_is_an_encode_error_on_attr(op: object) -> None:
    tl = TransactionLayer(1)
    with pytest.raises(EncodeError) as info:
        tl.atomic(2, 0x100, op, 1)  # type: ignore[arg-type]
    assert info.value.field == "attr" and tl.queued == 0


def test_requests_default_to_vc_0_and_metadata_0() -> None:
    tl = TransactionLayer(1, config=TLConfig(compress=False))
    drain(tl)
    grant_all(tl)
    tl.read(2, 0x100, 4)
    tl.write(2, 0x200, bytes(4))
    tl.write(2, 0x240, bytes(4), byte_enable=1)
    tl.atomic(2, 0x280, "swap", 1)
    sent = requests_in(drain(tl))
    assert [(r.vchan, r.metadata) for r in sent] == [(0, 0)] * 4
    assert [r.cmd for r in sent] == [0x03, 0x29, 0x28, 0x30]


@pytest.mark.parametrize(("call", "field"), [
    (lambda tl: tl.read(1024, 0x100, 4), "dst"),
    (lambda tl: tl.read(-1, 0x100, 4), "dst"),
    (lambda tl: tl.read(2, 0x100, 4, vc=4), "vchan"),
    (lambda tl: tl.read(2, 0x100, 4, vc=-1), "vchan"),
    (lambda tl: tl.read(2, 0x100, 4, metadata=256), "metadata"),
    (lambda tl: tl.read(2, 0x100, 4, metadata=-1), "metadata"),
])
def test_request_fields_out_of_range_name_the_field(call: object, field: str) -> None:
    tl = TransactionLayer(1)
    with pytest.raises(EncodeError) as info:
        call(tl)  # type: ignore[operator]
    assert info.value.field == field and tl.queued == 0


def test_request_fields_at_the_top_of_their_range_are_accepted() -> None:
    tl = TransactionLayer(1)
    tl.read(1023, 0x100, 4, vc=3, metadata=255)
    assert tl.queued == 1


def _one_read(length: int = 64) -> tuple[TransactionLayer, int, Request]:
    tl = TransactionLayer(1, config=TLConfig(compress=False))
    drain(tl)
    grant_all(tl)
    handle = tl.read(2, 0x100, length)
    [req] = requests_in(drain(tl))
    return tl, handle, req


def _events(tl: TransactionLayer, fields: list[object], data: tuple[bytes, ...] | list[bytes] = ()
            ) -> list[object]:
    """Everything ``tl`` reports for one control half-flit of ``fields`` and ``data``."""
    return [e for f in flits(halves(fields, data)) for e in tl.receive(f)]


def test_a_response_with_too_many_beats_names_what_was_expected() -> None:
    # Rule 6 (E4): the op ends with DATA_ERROR; the error carries got and expected beats.
    tl, handle, req = _one_read(64)
    response = ok_response(req, beats=2)
    events = _events(tl, [response], [bytes(32)] * 4)
    rejected = [e for e in events if isinstance(e, FieldRejected)]
    assert len(rejected) == 1 and rejected[0].field == response
    error = rejected[0].error
    assert isinstance(error, ResponseMismatchError)
    assert (error.tag, error.field, error.got, error.expected) == (req.tag, "beats", 2, 1)
    assert [(c.handle, c.status) for c in events if isinstance(c, Completion)] == [
        (handle, Status.DATA_ERROR)]


@pytest.mark.parametrize("status", [4, 15])
def test_a_status_beyond_the_known_codes_ends_the_op_with_an_error(status: int) -> None:
    # Rule E3: status codes 0-3 are known; 4 is the first unknown one.
    tl, handle, req = _one_read(64)
    response = ok_response(req, status=status, rd_wr=0)
    events = _events(tl, [response])
    [rejected] = [e for e in events if isinstance(e, FieldRejected)]
    assert isinstance(rejected.error, FieldRangeError) and rejected.error.field == "status"
    assert [(c.handle, c.status) for c in events if isinstance(c, Completion)] == [
        (handle, Status.DATA_ERROR)]


def test_status_3_is_known_and_passed_to_the_op() -> None:
    tl, handle, req = _one_read(64)
    events = _events(tl, [ok_response(req, status=3)])
    # rule P3 (specs/tl.md): a read's DATA_ERROR beat is a poisoned beat; one beat here
    assert events == [Completion(handle, Status.DATA_ERROR, None, poisoned=0b1)]


def test_a_misrouted_response_names_itself_and_both_accelerators() -> None:
    tl, handle, req = _one_read(64)
    assert tl.outstanding == 1
    response = ok_response(req, beats=1, dst_acc=7)
    events = _events(tl, [response], [bytes(32)] * 2)
    [rejected] = [e for e in events if isinstance(e, FieldRejected)]
    error = rejected.error
    assert isinstance(error, MisroutedError)
    assert (error.what, error.dst, error.at) == ("response", 7, 1)
    assert rejected.field == response
    assert [(c.handle, c.status) for c in events if isinstance(c, Completion)] == [
        (handle, Status.DATA_ERROR)]


def test_a_response_for_a_tag_never_issued_is_rejected_with_the_field() -> None:
    tl, _, req = _one_read(64)
    stray = ok_response(req, tag=req.tag + 1, rd_wr=1)
    events = _events(tl, [stray])
    assert len(events) == 1 and isinstance(events[0], FieldRejected)
    assert events[0].field == stray and isinstance(events[0].error, TagError)
    assert tl.outstanding == 1  # the real op is still waiting


def test_a_compressed_request_on_an_empty_way_is_rejected_with_the_field() -> None:
    tl = TransactionLayer(2, config=TLConfig(compress=False))
    drain(tl)
    field = CompressedRequest(cmd=0x03, vchan=0, tag=1, pool=1, attr=0, len=0, cway=3,
                              numbeats=0, addr_lo=0x100)
    events = _events(tl, [field])
    [rejected] = [e for e in events if isinstance(e, FieldRejected)]
    assert rejected.field == field and isinstance(rejected.error, AddressCacheError)
    assert rejected.error.way == 3


def test_a_compressed_request_inherits_the_ways_address_space() -> None:
    # The way supplies asi, src/dst, metadata and the high address bits: a way loaded by a
    # request to address space 1 makes its compressed followers non-memory accesses too,
    # answered UNSUPPORTED_REQUEST like the request itself.
    tl = TransactionLayer(2, config=TLConfig(compress=False))
    drain(tl)
    grant_all(tl)
    loader = Request(cmd=0x03, vchan=0, asi=1, tag=1, pool=1, attr=0, len=0, metadata=0,
                     addr=0x100, src_acc=1, dst_acc=2, cload=1, cway=0, numbeats=0)
    follower = CompressedRequest(cmd=0x03, vchan=0, tag=2, pool=1, attr=0, len=0, cway=0,
                                 numbeats=0, addr_lo=0x104)
    _events(tl, [loader, follower])
    walk = TLDeframer()
    statuses = []
    for flit in drain(tl):
        for half in (flit[:32], flit[32:]):
            started, _ = walk.feed_half(half)
            statuses += [(p.value.tag, p.value.status) for p in started
                         if type(p.value).__name__ == "Response"]
    assert statuses == [(1, Status.UNSUPPORTED_REQUEST), (2, Status.UNSUPPORTED_REQUEST)]
    assert tl.counters.requests_received == 2


def _fresh(compress: bool = False) -> TransactionLayer:
    tl = TransactionLayer(1, config=TLConfig(compress=compress))
    drain(tl)  # the initial credit grant goes out
    return tl


def test_two_uncompressed_requests_fill_one_control_half_flit_exactly() -> None:
    # Rule 3: a control half-flit has 8 sectors; two 4-sector requests fit exactly.
    tl = _fresh()
    grant_all(tl)
    tl.read(2, 0x100, 4)
    tl.read(2, 0x200, 4)
    flit = tl.poll()
    assert flit is not None and len(requests_in([flit[:32] + bytes(32)])) == 2


def test_address_cache_ways_are_loaded_round_robin() -> None:
    # Rule 5: an uncompressed request with cload loads the next way, round robin.
    tl = _fresh(compress=True)
    grant_all(tl)
    for i in range(5):
        tl.read(2, i << 24, 4)  # distinct address bits 56..24: a new way each time
    sent = requests_in(drain(tl))
    assert [(r.cload, r.cway) for r in sent] == [(1, 0), (1, 1), (1, 2), (1, 3), (1, 0)]


def test_stalls_are_counted_once_per_waiting_operation() -> None:
    tl = _fresh()
    handles = [tl.read(2, 0x100, 4) for _ in range(3)]
    for _ in range(5):
        tl.poll()  # no credits: the head of the queue stalls, counted once
    assert tl.counters.credit_stalls == 1 and tl.queued == 3
    tl.receive(flits(halves([FlowControl(1, 0, 0, 0)]))[0])  # one request credit
    drain(tl)
    assert tl.counters.credit_stalls == 2 and tl.queued == 2  # the next head stalls
    assert tl.counters.tag_stalls == 0 and len(handles) == 3


def test_a_tag_stall_is_counted_once() -> None:
    tl = _fresh()
    for _ in range(33):
        grant_all(tl)  # 33 x 63 request credits: more than the 2048 tags
    for _ in range(2049):
        tl.read(2, 0x100, 4)
    drain(tl)
    assert (tl.outstanding, tl.queued) == (2048, 1)
    assert tl.counters.tag_stalls == 1


def test_credit_only_half_flits_are_counted() -> None:
    # Rule 4: with nothing else to send, owed credits leave in a credit-only half-flit.
    tl = TransactionLayer(2, config=TLConfig(compress=False))
    drain(tl)  # the initial grant
    before = tl.counters.credit_only_halves
    tl.receive(flits(halves([_read(1)]))[0])  # served; its response waits for credits
    sent = drain(tl)
    assert len(sent) == 1 and tl.counters.credit_only_halves == before + 1
    assert _returned(sent) == [1, 0, 0, 0] and tl.responses_queued == 1
    assert tl.counters.credit_stalls == 1  # the response waiting for credits, counted once


def test_a_grant_of_data_credits_alone_is_applied() -> None:
    # Rule 4: any non-zero class in a flow-control field is a grant.
    tl = _fresh()
    tl.receive(flits(halves([FlowControl(1, 0, 0, 0)]))[0])  # a command credit, no data
    tl.write(2, 0x100, bytes(64))
    drain(tl)
    assert tl.queued == 1  # the write needs one request-data credit
    tl.receive(flits(halves([FlowControl(0, 0, 1, 0)]))[0])
    drain(tl)
    assert tl.queued == 0 and tl.outstanding == 1


def test_compression_is_on_by_default() -> None:
    # Rule 5 (compress=True by default): a second request to the same way is compressed.
    tl = TransactionLayer(1)
    drain(tl)
    grant_all(tl)
    tl.read(2, 0x100, 4)
    tl.read(2, 0x104, 4)
    drain(tl)
    assert tl.counters.compressed_requests == 1 and tl.counters.requests_sent == 2
