"""The hostile peer of issue 15 (deliverable 7): one honest side, one side sending
arbitrary fields — requests, responses (right, wrong, for tags never issued), credit
grants (also past any maximum), raw TL bytes — checked after every step.

:class:`HostilePeer` holds the rules and invariants; a subclass says how TL flits
reach the honest side and how its output comes back (bare TL, or a full Endpoint
behind a DataLink). Invariants (``specs/tl.md``, "Errors from the peer"):

* the honest side raises nothing while taking the peer's flits;
* every operation it issued completes at most once, and completed + queued +
  outstanding = issued (nothing lost); after a link failure nothing is pending;
* the credit books balance (in use + owed + held by the peer = capacity) and the
  wire tags too (free + outstanding = 2048, disjoint); counters stay within limits;
* its memory changes only by the peer's writes: every 64-byte block is zero or
  the data of a write the peer sent to that address (each write's data is unique).
"""

from __future__ import annotations

from hypothesis import event
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tests.helpers.tl_peer import books_balance, flits, halves
from ualink_ref.errors import LinkFailedError
from ualink_ref.tl import Memory, TransactionLayer
from ualink_ref.tl.codec import (
    CompressedRequest,
    CompressedResponseData,
    CompressedResponseNoData,
    FlowControl,
    Request,
    Response,
    TLField,
    VcFlowControl,
    decode_control_half,
)
from ualink_ref.tl.credits import CreditConfig
from ualink_ref.tl.events import Completion, FieldRejected
from ualink_ref.tl.framing import TLDeframer, data_halves
from ualink_ref.tl.limits import TLLimits

HONEST, PEER = 1, 2
CREDITS = CreditConfig(per_vc=(2, 2, 6, 5), pool=(4, 4, 10, 8))
LIMITS = TLLimits(max_responses=3, max_messages=2, max_credits=300)
MAPPED = 0x1000  # the honest side's memory: [0, 4 KiB)

addresses = st.integers(0, MAPPED // 64 - 1).map(lambda i: 64 * i)
bits = st.integers(0, 1)
vcs = st.integers(0, 3)


class HostilePeer(RuleBasedStateMachine):
    """Rules and invariants shared by the TL and the Endpoint machines (see module doc)."""

    def __init__(self) -> None:
        super().__init__()
        self.memory = Memory([(0, MAPPED)], max_pages=8)
        self.issued: set[int] = set()
        self.completed: dict[int, Completion] = {}
        self.rejected = 0
        self.peer_words: dict[int, set[bytes]] = {}  # 64-byte block -> words the peer wrote
        self.seen: dict[int, Request] = {}  # honest requests by wire tag (latest)
        self.walk = TLDeframer()  # reads the honest side's TL output
        self.write_serial = 0
        self.steps = 0

    # -- what a subclass provides ------------------------------------------------

    @property
    def tl(self) -> TransactionLayer:
        raise NotImplementedError

    def deliver(self, tl_flits: list[bytes]) -> list[object]:
        """Give TL flits to the honest side; return its events."""
        raise NotImplementedError

    def collect(self, budget: int) -> list[bytes]:
        """Up to ``budget`` slots of the honest side's output, as TL flits."""
        raise NotImplementedError

    # -- helpers -----------------------------------------------------------------

    def _events(self, events: list[object]) -> None:
        self.steps += 1
        for item in events:
            if type(item) is Completion:
                assert item.handle in self.issued, item
                assert item.handle not in self.completed, f"completed twice: {item}"
                self.completed[item.handle] = item
            elif type(item) is FieldRejected:
                self.rejected += 1

    def _send(self, fields: list[TLField], data: list[bytes] | None = None) -> None:
        if data is None:
            data = [bytes([0xA5]) * 32] * sum(data_halves(f) for f in fields)
        self._events(self.deliver(flits(halves(fields, data))))

    # -- the honest side's operations -------------------------------------------

    @initialize()
    def initial_grant(self) -> None:
        # As a real peer does first (later grants are arbitrary, see ``grant``).
        self._send([FlowControl(4, 4, 10, 8)])

    @rule(kind=st.sampled_from(["read", "write", "atomic", "message"]), addr=addresses,
          vc=vcs)
    def issue(self, kind: str, addr: int, vc: int) -> None:
        tl = self.tl
        try:
            if kind == "read":
                handle = tl.read(PEER, addr, 64, vc=vc)
            elif kind == "write":
                handle = tl.write(PEER, addr, b"\x01" * 64, vc=vc)
            elif kind == "message":
                handle = tl.write(PEER, addr, b"\x02" * 8, vc=vc, message=True)
            else:
                handle = tl.atomic(PEER, addr, "add", 1, vc=vc)
        except LinkFailedError:
            assert tl.failed is not None
            return
        self.issued.add(handle)

    @rule(budget=st.integers(1, 6))
    def pump(self, budget: int) -> None:
        for flit in self.collect(budget):
            for half in (flit[:32], flit[32:]):
                started, _ = self.walk.feed_half(half)  # the honest side frames correctly
                for pending in started:
                    if isinstance(pending.value, Request):
                        self.seen[pending.value.tag] = pending.value

    # -- the peer's fields -------------------------------------------------------

    @rule(pick=st.integers(0, 1 << 16), mutation=st.sampled_from(
        ["none", "none", "none", "none", "src", "dst", "beats", "rd_wr", "status", "spare",
         "split", "tag", "compressed"]), pool=bits, vc=vcs, status=st.integers(0, 15))
    def respond(self, pick: int, mutation: str, pool: int, vc: int, status: int) -> None:
        if not self.seen:
            return
        req = self.seen[sorted(self.seen)[pick % len(self.seen)]]
        read_type = req.cmd in (0x03, 0x30)
        beats = req.len // 16 + 1 if req.cmd == 0x03 else 1
        values = {"vchan": vc, "tag": req.tag, "pool": pool, "len": beats - 1 if read_type else 0,
                  "offset": 0, "status": 0, "rd_wr": 0 if read_type else 1, "last": 1,
                  "src_acc": PEER, "dst_acc": HONEST, "spare": 0}
        changes = {"src": {"src_acc": 5}, "dst": {"dst_acc": 6}, "beats": {"len": beats % 4},
                   "rd_wr": {"rd_wr": 1 - values["rd_wr"]}, "status": {"status": status},
                   "spare": {"spare": 1}, "split": {"last": 0}, "tag": {"tag": pick % 2048}}
        values.update(changes.get(mutation, {}))
        field: TLField = Response(**values)
        if mutation == "compressed":
            cls = CompressedResponseData if read_type else CompressedResponseNoData
            field = cls(vc, req.tag, pool, values["len"])
        self._send([field])

    @rule(source=st.integers(0, 4), counts=st.tuples(*[st.integers(0, 31)] * 2,
                                                      *[st.integers(0, 255)] * 2))
    def grant(self, source: int, counts: tuple[int, int, int, int]) -> None:
        field = FlowControl(*counts) if source == 4 else VcFlowControl(source, *counts)
        self._send([field])

    @rule(kind=st.sampled_from([0x03, 0x29, 0x2A, 0x30, 0x28]), addr=addresses, pool=bits,
          vc=vcs, tag=st.integers(0, 2047), dst=st.sampled_from([HONEST, HONEST, 9]),
          cload=bits, cway=st.integers(0, 3))
    def peer_request(self, kind: int, addr: int, pool: int, vc: int, tag: int, dst: int,
                     cload: int, cway: int) -> None:
        self.write_serial += 1
        unique = self.write_serial.to_bytes(4, "little") * 16  # 64 bytes, unique per write
        length = 64 if kind != 0x30 else 8
        attr = 0 if kind != 0x30 else 0x10  # atomic SWAP: stores the operand as sent
        req = Request(kind, vc, 0, tag, pool, attr, length // 4 - 1, 0, addr, PEER, dst, cload,
                      cway, 0)
        data = []
        if kind in (0x29, 0x2A, 0x28):
            data = [unique[:32], unique[32:]]
            if kind == 0x28:
                data.insert(0, (0xFF).to_bytes(32, "little"))  # the first eight bytes enabled
        elif kind == 0x30:
            data = [unique[:32], unique[32:]]
        if dst == HONEST and kind in (0x29, 0x28, 0x30):
            self.peer_words.setdefault(addr, set()).add(unique[:4])
        self._send([req], data)

    @rule(kind=st.sampled_from([0x03, 0x29]), way=st.integers(0, 3), lo=addresses,
          pool=bits, tag=st.integers(0, 2047))
    def peer_compressed_request(self, kind: int, way: int, lo: int, pool: int, tag: int) -> None:
        # A read, or a write of zeros (which never changes memory the invariant tracks).
        self._send([CompressedRequest(kind, 0, tag, pool, 0, 15, way, 0, lo)],
                   [bytes(32)] * (2 if kind == 0x29 else 0))

    @rule(raw=st.binary(min_size=64, max_size=64), framed=st.integers(0, 7),
          types=st.lists(st.sampled_from([0, 4, 5, 6]), min_size=8, max_size=8))
    def raw_flit(self, raw: bytes, framed: int, types: list[int]) -> None:
        if framed:  # mostly: a half of arbitrary 1-sector fields, then the data it owes
            head = bytearray(raw[:32])
            for sector, ftype in enumerate(types):
                head[4 * sector] = (ftype << 4) | (head[4 * sector] & 0x0F)
            owed = sum(data_halves(value) for _, value in decode_control_half(bytes(head)))
            stream = [bytes(head)] + [raw[32:]] * owed
            self._events(self.deliver(flits(stream)))
        elif self.steps >= 25:  # raw bytes mostly end the link: let the rest run first
            self._events(self.deliver([raw]))

    # -- invariants --------------------------------------------------------------

    @invariant()
    def nothing_lost_or_doubled(self) -> None:
        tl = self.tl
        pending = tl.queued + tl.outstanding
        assert len(self.completed) + pending == len(self.issued)
        if tl.failed is not None:
            assert pending == 0

    @invariant()
    def books_and_limits(self) -> None:
        tl = self.tl
        books_balance(tl)
        assert tl.responses_queued <= LIMITS.max_responses
        assert len(tl.messages) <= LIMITS.max_messages
        for row in tl.credit_books().sender.available:
            assert all(0 <= n <= LIMITS.max_credits for n in row)
        assert len(tl.memory._pages) <= tl.memory.max_pages

    @invariant()
    def no_buffer_held_without_a_reason(self) -> None:
        # Between fields (no data owed), the only buffers in use are those of requests
        # waiting for room in the response queue: anything else is a leaked credit.
        tl = self.tl
        if tl.rx_data_owed:  # the engine's own framing state
            return
        occupied = tl.credit_books().receiver.occupied
        assert all(row[1] == 0 and row[3] == 0 for row in occupied), occupied
        assert sum(row[0] for row in occupied) == tl.requests_waiting, occupied

    @invariant()
    def memory_changes_only_by_peer_writes(self) -> None:
        # Each peer write stores one 4-byte word, unique to it, in every word it covers.
        for base, page in self.tl.memory.snapshot().items():
            for off in range(0, len(page), 4):
                word = page[off : off + 4]
                if any(word):
                    block = (base + off) & ~63
                    assert word in self.peer_words.get(block, ()), (
                        f"word at {base + off:#x} changed without a peer write there")

    def teardown(self) -> None:
        # What the run reached (``--hypothesis-show-statistics``); no assertion rides on it.
        tl = self.tl
        event(f"link failed: {(tl.failed or '')[:40]}")
        event(f"fields rejected: {min(self.rejected, 10)}{'+' if self.rejected >= 10 else ''}")
        errors = sum(1 for c in self.completed.values() if c.error)
        event(f"ops completed: {'some' if self.completed else 'none'}, with error: "
              f"{'some' if errors else 'none'}")
        event(f"requests deferred: {tl.counters.requests_deferred > 0}")
        event(f"peer writes landed: {bool(tl.memory.snapshot())}")
