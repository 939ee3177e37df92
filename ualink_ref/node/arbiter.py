"""The egress arbiter of one switch port: virtual output queues and round robin.

The rules it keeps are S5 and S6 of specs/fabric.md.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ualink_ref.tl import codec, credits

#: Queue classes (S5): requests and responses.
REQUEST, RESPONSE = 0, 1
#: The (command, data) credit classes of each queue class.
CREDIT_CLASSES = ((credits.REQ_CMD, credits.REQ_DATA), (credits.RSP_CMD, credits.RSP_DATA))
#: The fields a switch routes (S2): requests (expanded on ingress, S3) and responses.
Routed = codec.Request | codec.Response


class Copies:
    """The copies of one multicast store still to leave the switch (S9): the store's
    ingress buffers are freed when the last one has."""

    def __init__(self, count: int) -> None:
        self._left = count

    def one_sent(self) -> bool:
        """Count one copy sent; True when it was the last."""
        self._left -= 1
        return self._left == 0


@dataclass(frozen=True)
class Packet:
    """A field held in the switch: what to send on, and what it holds at ingress.

    ``source`` is the ingress credit source (a VC or ``credits.POOL``; -1 for a
    reply the switch made itself, which holds no ingress credits); ``ready`` the
    slot from which it may leave (S7); ``copies`` is shared by the copies of one
    multicast store (S9), which free the store's ingress buffers once all have left;
    ``local`` marks an answer the switch made itself (S2, H7), counted against the
    egress port's bound on such answers (H5).
    """

    value: Routed
    halves: list[bytes]
    ingress: int
    source: int
    data_credits: int
    ready: float
    copies: Copies | None = None
    local: bool = False

    @property
    def queue_class(self) -> int:
        """:data:`RESPONSE` or :data:`REQUEST`."""
        return RESPONSE if isinstance(self.value, codec.Response) else REQUEST


#: Sends the packet chosen, with the egress credit source it took; called in order.
Send = Callable[[Packet, int], None]


class Arbiter:
    """The queues waiting for one egress port and its round-robin state (S5, S6)."""

    def __init__(self) -> None:
        # queues[class][vc][ingress]: FIFOs of packets, made when a packet arrives and
        # dropped when emptied — an egress holds a FIFO only per ingress with packets
        # waiting (specs/fabric.md H8: O(queued), not O(ports), per port), so the
        # arbiter needs no port count.
        self._queues: list[list[dict[int, deque[Packet]]]] = [
            [{} for _ in range(credits.NUM_VCS)] for _ in range(2)]
        # Per (class, VC) the ingress ports with packets waiting, in turn order.
        self._rings: list[list[deque[int]]] = [
            [deque() for _ in range(credits.NUM_VCS)] for _ in range(2)]
        self._next_vc = [0, 0]
        self._queued = 0
        self._queued_in = [0, 0]  # per class: an empty class is answered at once

    @property
    def queued(self) -> int:
        """Packets waiting for this egress."""
        return self._queued

    def flush(self) -> list[Packet]:
        """Take every queued packet out, in no particular order (a port that faulted,
        specs/fabric.md H7); the round-robin state starts afresh."""
        out = [p for by_vc in self._queues for by_ingress in by_vc
               for queue in by_ingress.values() for p in queue]
        for by_vc in self._queues:
            for by_ingress in by_vc:
                by_ingress.clear()
        for rings in self._rings:
            for ring in rings:
                ring.clear()
        self._queued = 0
        self._queued_in = [0, 0]
        return out

    def enqueue(self, packet: Packet) -> None:
        """Queue ``packet`` behind the others from its ingress, class and VC."""
        cls = packet.queue_class
        vc = packet.value.vchan
        by_ingress = self._queues[cls][vc]
        queue = by_ingress.get(packet.ingress)
        if queue is None:
            queue = by_ingress[packet.ingress] = deque()
            self._rings[cls][vc].append(packet.ingress)
        queue.append(packet)
        self._queued += 1
        self._queued_in[cls] += 1

    def arbitrate(self, cls: int, room: int, now: float, tx: credits.SenderCredits,
                  send: Send, on_stall: Callable[[], None]) -> int:
        """Send packets of class ``cls`` while ``room`` (field slots of the control
        half-flit) allows; return the room left (S6).

        Each packet leaves only with the egress credits ``tx`` holds for it (S4);
        ``on_stall`` counts a head skipped for lack of them.
        """
        size = 2 if cls == RESPONSE else 4
        if not self._queued_in[cls] and room >= size:
            return room  # nothing of this class waits and no VC's turn would move
        rings = self._rings[cls]
        queues = self._queues[cls]
        cmd_cls, data_cls = CREDIT_CLASSES[cls]
        start = self._next_vc[cls]
        for k in range(credits.NUM_VCS):
            vc = (start + k) % credits.NUM_VCS
            ring = rings[vc]
            tries = len(ring)
            while tries and room >= size:
                tries -= 1
                ingress = ring[0]
                queue = queues[vc][ingress]
                packet = queue[0]
                if packet.ready > now:
                    ring.rotate(-1)
                    continue
                need = (len(packet.halves) // 2) if cls == RESPONSE else packet.data_credits
                source = tx.take(vc, cmd_cls, data_cls, need)
                if source < 0:
                    on_stall()
                    ring.rotate(-1)
                    continue
                queue.popleft()
                self._queued -= 1
                self._queued_in[cls] -= 1
                ring.popleft()
                if queue:
                    ring.append(ingress)  # round robin: this ingress goes to the back
                else:
                    del queues[vc][ingress]
                send(packet, source)
                room -= size
            if room < size:
                self._next_vc[cls] = (vc + 1) % credits.NUM_VCS
                break
        return room


__all__ = ["CREDIT_CLASSES", "REQUEST", "RESPONSE", "Arbiter", "Copies", "Packet", "Routed"]
