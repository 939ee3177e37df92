"""Go-back-N under arbitrary fault schedules: a Hypothesis RuleBasedStateMachine.

Two DataLinks, A and B, both sending. Each direction is a FIFO of flits on
the wire; the rules put flits on it (a slot: timers, then poll both ends),
deliver, corrupt (1-3 bits), drop (silently) or drop only payload-less flits
at the head, and advance time so that replay timers fire. After every step:
what each end delivered is a prefix of what the other sent (so nothing is
lost, duplicated or reordered), and no end has more than 256 flits in flight.
At teardown the faults stop and every queued TL flit must arrive within a
bounded number of slots.
"""

from __future__ import annotations

from collections import deque

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ualink_ref.dl import DataLink, TLFlitDelivered
from ualink_ref.dl.config import DLConfig
from ualink_ref.net.channels import carries_payload, flip_bits

TIMEOUT = 40.0


class GoBackN(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.ends = {"A": DataLink(DLConfig(replay_timeout=TIMEOUT)),
                                            "B": DataLink(DLConfig(replay_timeout=TIMEOUT))}
        self.sent: dict[str, list[bytes]] = {"A": [], "B": []}
        self.got: dict[str, list[bytes]] = {"A": [], "B": []}  # delivered AT this end
        self.wire: dict[str, deque[bytes]] = {"A": deque(), "B": deque()}  # towards this end
        self.now = 0.0
        self.counter = 0

    def _other(self, side: str) -> str:
        return "B" if side == "A" else "A"

    def _receive(self, side: str, flit: bytes) -> None:
        for e in self.ends[side].receive(flit, self.now):
            if isinstance(e, TLFlitDelivered):
                self.got[side].append(e.data)

    def _timers(self) -> None:
        for end in self.ends.values():
            t = end.next_timer()
            if t is not None and self.now >= t:
                end.handle_timer(self.now)

    @rule(side=st.sampled_from("AB"), n=st.integers(1, 40))
    def send(self, side: str, n: int) -> None:
        flits = []
        for _ in range(n):
            self.counter += 1
            flits.append(self.counter.to_bytes(8, "big") * 8)
        self.sent[side] += flits
        self.ends[side].send(flits)

    @rule(slots=st.integers(1, 4))
    def slot(self, slots: int) -> None:
        for _ in range(slots):
            self._timers()
            for side, end in self.ends.items():
                flit = end.poll(self.now)
                if flit is not None:
                    self.wire[self._other(side)].append(flit)
            self.now += 1

    @precondition(lambda self: self.wire["A"] or self.wire["B"])
    @rule(side=st.sampled_from("AB"), count=st.integers(1, 8))
    def deliver(self, side: str, count: int) -> None:
        for _ in range(min(count, len(self.wire[side]))):
            self._receive(side, self.wire[side].popleft())

    @precondition(lambda self: self.wire["A"] or self.wire["B"])
    @rule(side=st.sampled_from("AB"),
          bits=st.lists(st.integers(0, 5119), min_size=1, max_size=3, unique=True))
    def corrupt(self, side: str, bits: list[int]) -> None:
        if self.wire[side]:
            self.wire[side][0] = flip_bits(self.wire[side][0], bits)

    @precondition(lambda self: self.wire["A"] or self.wire["B"])
    @rule(side=st.sampled_from("AB"), count=st.integers(1, 17))
    def drop(self, side: str, count: int) -> None:
        for _ in range(min(count, len(self.wire[side]))):
            self.wire[side].popleft()

    @precondition(lambda self: self.wire["A"] or self.wire["B"])
    @rule(side=st.sampled_from("AB"))
    def drop_acks(self, side: str) -> None:
        self.wire[side] = deque(f for f in self.wire[side] if carries_payload(f))

    @rule(dt=st.sampled_from([1.0, TIMEOUT / 2, TIMEOUT, 3 * TIMEOUT]))
    def advance_time(self, dt: float) -> None:
        self.now += dt
        self._timers()

    @invariant()
    def delivered_is_prefix_of_sent(self) -> None:
        for side in "AB":
            got, sent = self.got[side], self.sent[self._other(side)]
            assert got == sent[:len(got)], f"{side} delivered out of order or duplicated"

    @invariant()
    def window_respected(self) -> None:
        for end in self.ends.values():
            assert 0 <= end.in_flight <= 256

    def teardown(self) -> None:
        # Coverage notes (shown by --hypothesis-show-statistics).
        c = [e.counters for e in self.ends.values()]
        event(f"replays: {'yes' if any(x.replays for x in c) else 'no'}")
        event(f"timeouts: {'yes' if any(x.timeouts for x in c) else 'no'}")
        event(f"crc errors: {'yes' if any(x.crc_errors for x in c) else 'no'}")
        event(f"sequence gaps: {'yes' if any(x.sequence_errors for x in c) else 'no'}")
        # Faults stop: the wire delivers everything, every slot. Bound: the data itself,
        # a few replay timeouts, and a full window of replays.
        queued = len(self.sent["A"]) + len(self.sent["B"])
        bound = int(queued // 9 + 6 * TIMEOUT + 2 * 256 + 50)
        for _ in range(bound):
            if all(len(self.got[s]) == len(self.sent[self._other(s)]) for s in "AB") and all(
                    e.idle for e in self.ends.values()) and not any(self.wire.values()):
                break
            self.slot(1)
            for side in "AB":
                self.deliver(side, len(self.wire[side]))
        for side in "AB":
            assert self.got[side] == self.sent[self._other(side)], (
                f"{side}: {len(self.got[side])} of {len(self.sent[self._other(side)])} "
                f"delivered within {bound} fault-free slots")


# Longer runs than the default 50 steps: enough for windows to fill and timers to fire.
GoBackN.TestCase.settings = settings(settings.default, stateful_step_count=100)
TestGoBackN = GoBackN.TestCase
