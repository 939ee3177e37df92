"""The fast fidelity's engine: memory operations as packets through link queues, in time.

Rules (``specs/fast.md``, "Engine", E1-E10):

E1. Each direction of each accelerator's link on each plane is one :class:`LinkQueue`: it
    serves one packet at a time for the packet's link slots (rules Q1, Q2), responses
    ahead of requests (switch rule S6 and TL rule 3), each class first come first served.
E2. An operation from ``src`` to ``dst`` on plane ``p`` crosses four queues: its request
    ``src``'s uplink then ``dst``'s downlink, its response ``dst``'s uplink then ``src``'s
    downlink, with fixed hops between them (cable, switch and pipelines: E3).
E3. A request takes ``link`` slots (rule F3) from the downlink to its target and the rest
    of its measured zero-load one-way latency (rule Q4), less its two queues' service,
    from its uplink to the downlink (project choice, the split the validation favours:
    with half of the pipelines on the last hop a signal landed half a slot late behind
    data, a slot a step on a short ring); its response likewise from what the measured
    zero-load latency (Q3) leaves. So the engine's zero-load latencies equal the exact
    pod's, shape by shape. A group operation (E5) splits its measured latency (Q3)
    evenly over its four hops.
E4. The target acts on a request (an atomic adds to its flag) when the request arrives,
    and answers at once.
E5. A request to a multicast group is copied at the switch to every member's downlink; the
    switch answers the requester once every member has answered (stores), or with the sum
    once every member's data is in (reduce-loads): switch rule S9's semantics.
E6. Not modelled: bit errors and replays, credits and buffers (no back-pressure, so no
    head-of-line blocking and no PFC pauses), the switch's round robin (a queue is first
    come first served within a class), link training and faults. Rule V3 says when a
    run's figures are not to be trusted for it.
E7. Times are real numbers of slots; events at the same time run in the order they were
    scheduled, so a run is deterministic.
E8. A burst is ``pieces`` operations of one shape issued together on one plane: at each
    queue it takes ``pieces`` times one's service, its first piece moves on after one
    piece's service (cut through) and its last no earlier than one piece's service after
    it arrived (a burst that came in slower than this queue serves it is taken in only
    once it can be served without idling); the target acts once the last piece is in.
    A burst of one is one operation.
E9. A burst's pieces complete one bottleneck service (the largest of its four per-piece
    services) apart, the last when the burst does: the engine reports them in
    :data:`Engine.COMPLETION_STEPS` groups spread over that span, so a requester's
    in-flight limit frees up as it would piece by piece (project choice: with every
    piece held to the burst's end, bursts starved the in-flight limit).
E10. Responses go first (E1) at piece granularity: a response reaching a queue in the
    middle of a request burst is served at once, as it would be between two of the
    burst's pieces, and the burst ends that much later (project choice: served after the
    whole burst, a response waited up to a burst's length, which a piece-by-piece run
    never makes it do; with it a 4-plane ring's bursts of 32 went from 12 % to 0.1 %
    off the piece-by-piece run).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import count

from ualink_ref.fast.calibrate import LinkCalibration, OpShape, beats_of

#: A packet's class at a queue (E1): responses are served first.
REQUEST, RESPONSE = 0, 1


@dataclass(slots=True)
class Operation:
    """One memory operation in flight (E2): who, what, and what to call when it ends."""

    src: int
    dst: int  # an accelerator, or a multicast group (E5)
    plane: int
    kind: str  # "write", "read" or "atomic"
    nbytes: int
    shape: OpShape
    #: Slots between queues (E3): request uplink -> downlink -> target, response uplink
    #: -> downlink -> requester.
    hops: tuple[float, float, float, float]
    done: Callable[[Operation, float], None]
    addr: int = 0
    issued_at: float = 0.0
    #: Operations of the shape sent back to back as one burst (E8).
    pieces: int = 1
    #: Called with (op, time, pieces) as a burst's pieces complete, before ``done`` (E9).
    progress: Callable[[Operation, float, int], None] | None = None
    #: Members (a group: E5) still to answer, and the latest answer's last piece so far.
    waiting: int = 0
    latest: float = 0.0


@dataclass(slots=True)
class _Packet:
    """An operation's request or response (a burst of ``op.pieces``) at one queue."""

    op: Operation
    klass: int
    slots: float  # service of the whole burst
    piece: float  # service of one piece
    tail: float  # when its last piece has arrived at this queue
    then: Callable[[Operation, float, float], None]  # (op, head out, tail out)


@dataclass(slots=True)
class LinkQueue:
    """One direction of one link (E1): busy until ``free_at``; what waits, by class."""

    name: str
    free_at: float = 0.0
    busy: bool = False
    waiting: tuple[deque[_Packet], deque[_Packet]] = field(
        default_factory=lambda: (deque(), deque()))
    #: While it serves a request burst: when that ends (else -1), and a token that
    #: retires the burst's scheduled end when a response cuts in (E10).
    burst_until: float = -1.0
    token: int = 0
    #: Slots it spent serving, and the most request slots that waited in it at once.
    served_slots: float = 0.0
    peak_backlog: float = 0.0
    backlog: float = 0.0
    #: When it first started and last finished serving (-1: never).
    first_at: float = -1.0
    last_at: float = -1.0

    @property
    def busy_share(self) -> float:
        """Its busy share between its first and last service (0 if it never served)."""
        window = self.last_at - self.first_at
        return self.served_slots / window if window > 0 else 0.0


class Engine:
    """The event loop and every link queue of a pod (rules E1-E7)."""

    def __init__(self, accelerators: int, planes: int, calibration: LinkCalibration,
                 groups: dict[int, tuple[int, ...]] | None = None) -> None:
        self.calibration = calibration
        self.now = 0.0
        self._events: list[tuple[float, int, Callable[[], None]]] = []
        self._order = count()
        self.up = [[LinkQueue(f"p{p}.acc{a}.up") for a in range(accelerators)]
                   for p in range(planes)]
        self.down = [[LinkQueue(f"p{p}.acc{a}.down") for a in range(accelerators)]
                     for p in range(planes)]
        self.groups = dict(groups or {})
        #: Called with (target, operation, time) when a request reaches its target (E4).
        self.on_target: Callable[[int, Operation, float], None] | None = None

    # -- time ----------------------------------------------------------------------------

    def at(self, time: float, action: Callable[[], None]) -> None:
        """Run ``action`` at ``time`` (E7)."""
        heapq.heappush(self._events, (time, next(self._order), action))

    def run(self, until: Callable[[], bool] | None = None) -> float:
        """Run events in time order until none is left (or ``until()`` holds)."""
        events = self._events
        while events:
            time, _, action = heapq.heappop(events)
            self.now = time
            action()
            if until is not None and until():
                break
        return self.now

    # -- operations ----------------------------------------------------------------------

    def hops(self, shape: OpShape, group_latency: float | None = None
             ) -> tuple[float, float, float, float]:
        """The four hops of a shape (rule E3)."""
        cal = self.calibration
        if group_latency is not None:
            service = (shape.request_up + shape.request_down + shape.response_up
                       + shape.response_down)
            hop = max(0.0, group_latency - service) / 4
            return hop, hop, hop, hop
        request = max(0.0, shape.one_way_slots - shape.request_up - shape.request_down)
        response = max(0.0, shape.latency_slots - shape.one_way_slots
                       - shape.response_up - shape.response_down)
        out: list[float] = []
        for delay in (request, response):
            down = min(delay, float(cal.link_slots))  # the rest is the switch side's (E3)
            out += [delay - down, down]
        return out[0], out[1], out[2], out[3]

    def issue(self, src: int, dst: int, plane: int, kind: str, nbytes: int, addr: int,
              done: Callable[[Operation, float], None], pieces: int = 1,
              progress: Callable[[Operation, float, int], None] | None = None) -> Operation:
        """Send ``pieces`` operations of one shape back to back, now, as one burst (E2, E5,
        E8); ``done(op, time)`` once the last one's response is in."""
        cal = self.calibration
        shape = cal.shape(kind, nbytes)
        group = cal.group_latency[(kind, beats_of(kind, nbytes))] if dst in self.groups else None
        op = Operation(src, dst, plane, kind, nbytes, shape, self.hops(shape, group), done,
                       addr, self.now, pieces=pieces, progress=progress)
        self._enqueue(self.up[plane][src], _Packet(op, REQUEST, shape.request_up * pieces,
                                                   shape.request_up, self.now,
                                                   self._at_switch))
        return op

    def _enqueue(self, queue: LinkQueue, packet: _Packet) -> None:
        ready = packet.tail + packet.piece - packet.slots
        if ready > self.now + 1e-9:
            # E8: a burst arriving faster than it left the queue before is taken in when
            # it can be served without waiting for its tail (so it holds nothing idle)
            self.at(ready, lambda: self._enqueue(queue, packet))
            return
        if not queue.busy:
            self._serve(queue, packet)
            return
        if packet.klass == RESPONSE and queue.burst_until > self.now + packet.slots:
            self._cut_in(queue, packet)
            return
        queue.waiting[packet.klass].append(packet)
        if packet.klass == REQUEST:
            queue.backlog += packet.slots
            queue.peak_backlog = max(queue.peak_backlog, queue.backlog)

    def _serve(self, queue: LinkQueue, packet: _Packet) -> None:
        """Rules E1, E8: serve ``packet`` from now or when the queue frees; its first piece
        is out after one piece's service, its last no earlier than one piece after it
        has arrived."""
        queue.busy = True
        start = max(self.now, queue.free_at)
        end = max(start + packet.slots, packet.tail + packet.piece)
        queue.free_at = end
        queue.served_slots += packet.slots
        if queue.first_at < 0:
            queue.first_at = start
        queue.last_at = end
        head = start + packet.piece
        if head < end:  # a burst: its head moves on while the rest is still served
            self.at(head, lambda: packet.then(packet.op, head, end))
            if packet.klass == REQUEST:
                queue.burst_until = end
            self._free_at(queue, end)
        else:
            self.at(end, lambda: self._depart(queue, packet))

    def _free_at(self, queue: LinkQueue, end: float) -> None:
        token = queue.token
        self.at(end, lambda: self._free(queue) if queue.token == token else None)

    def _cut_in(self, queue: LinkQueue, packet: _Packet) -> None:
        """E10: a response reaching a queue in the middle of a request burst is served
        at once, between two of the burst's pieces, and the burst ends that much later."""
        end = self.now + packet.slots
        head = min(end, self.now + packet.piece)
        self.at(head, lambda: packet.then(packet.op, head, end))
        queue.served_slots += packet.slots
        queue.burst_until += packet.slots
        queue.free_at = queue.last_at = queue.burst_until
        queue.token += 1
        self._free_at(queue, queue.burst_until)

    def _free(self, queue: LinkQueue) -> None:
        queue.busy = False
        queue.burst_until = -1.0
        responses, requests = queue.waiting[RESPONSE], queue.waiting[REQUEST]
        if responses:
            self._serve(queue, responses.popleft())
        elif requests:
            following = requests.popleft()
            queue.backlog -= following.slots
            self._serve(queue, following)

    def _depart(self, queue: LinkQueue, packet: _Packet) -> None:
        self._free(queue)
        packet.then(packet.op, self.now, self.now)

    # request: src uplink -> (the first hop) -> the switch -> target downlink(s)
    def _at_switch(self, op: Operation, head: float, tail: float) -> None:
        members = self.groups.get(op.dst, (op.dst,))
        op.waiting = len(members)
        hop = op.hops[0]
        for member in members:
            self._copy_at(head + hop, op, member, tail + hop)

    def _copy_at(self, time: float, op: Operation, target: int, tail: float) -> None:
        """At ``time``, the request's copy for ``target`` reaches that target's downlink."""
        self.at(time, lambda: self._to_target(op, target, tail))

    def _to_target(self, op: Operation, target: int, tail: float) -> None:
        hop = op.hops[1]
        self._enqueue(self.down[op.plane][target], _Packet(
            op, REQUEST, op.shape.request_down * op.pieces, op.shape.request_down, tail,
            lambda o, h, t: self.at(h + hop, lambda: self._target(o, target, t + hop))))

    def _target(self, op: Operation, target: int, tail: float) -> None:
        """E4: the target acts on the burst once its last piece is in, and answers each
        piece as it comes."""
        if self.on_target is not None:
            self.at(tail, lambda: self.on_target(target, op, tail) if self.on_target else None)
        hop = op.hops[2]
        self._enqueue(self.up[op.plane][target], _Packet(
            op, RESPONSE, op.shape.response_up * op.pieces, op.shape.response_up, tail,
            lambda o, h, t: self.at(h + hop, lambda: self._response_at_switch(o, t + hop))))

    def _response_at_switch(self, op: Operation, tail: float) -> None:
        op.latest = max(op.latest, tail)
        op.waiting -= 1
        if op.waiting:
            return  # a group's answer goes once every member has answered (E5)
        hop = op.hops[3]
        self._enqueue(self.down[op.plane][op.src], _Packet(
            op, RESPONSE, op.shape.response_down * op.pieces, op.shape.response_down,
            max(op.latest, self.now),
            lambda o, h, t: self._complete(o, t + hop)))

    #: Completion steps of a burst (E9): its pieces end in this many groups.
    COMPLETION_STEPS = 4

    def _complete(self, op: Operation, tail: float) -> None:
        """E9: a burst's pieces complete one bottleneck service apart, the last at
        ``tail``: reported in :data:`COMPLETION_STEPS` groups, then ``done``."""
        if op.pieces > 1 and op.progress is not None:
            shape = op.shape
            spacing = max(shape.request_up, shape.request_down, shape.response_up,
                          shape.response_down)
            steps = min(op.pieces, self.COMPLETION_STEPS)
            head = max(self.now, tail - (op.pieces - 1) * spacing)
            given = 0
            for j in range(steps - 1):
                share = op.pieces * (j + 1) // steps - given
                given += share
                when = head + (tail - head) * j / (steps - 1)
                self._progress_at(when, op, share)
            self.at(tail, lambda: self._finish(op, tail, op.pieces - given))
            return
        self.at(tail, lambda: op.done(op, tail))

    def _progress_at(self, time: float, op: Operation, pieces: int) -> None:
        progress = op.progress
        assert progress is not None
        self.at(time, lambda: progress(op, time, pieces))

    def _finish(self, op: Operation, time: float, pieces: int) -> None:
        if op.progress is not None:
            op.progress(op, time, pieces)
        op.done(op, time)


__all__ = ["REQUEST", "RESPONSE", "Engine", "LinkQueue", "Operation"]
