"""The switch's multicast and in-network reduction engine (``specs/fabric.md`` S9).

Project choice: UALink 2.0's in-network compute wire format is not public, so the
engine models the semantics NVIDIA documents for NVLink SHARP (PTX ``multimem.st`` and
``multimem.ld_reduce`` on a multicast object) on plain UALink requests:

* a **multicast store** is a Write / WriteFull whose ``dst_acc`` is a group ID: the
  switch sends a copy to every member (same address, the group ID as source), and
  answers the writer once, when every member has answered (the first error in member
  order, else OKAY);
* a **reduce-load** is a Read to a group whose ``metadata`` names the reduction
  (:data:`REDUCE_CODES`): the switch reads every member and answers with the
  elementwise sum, taken in member order;
* anything else addressed to a group (a Read without a reduction, an atomic, a write
  message, or a group with a member this switch cannot reach) is answered
  UNSUPPORTED_REQUEST at once.

What the engine holds it accounts for: at most ``SwitchConfig.multicast_ops`` operations
at once (each with at most 256 bytes per member); a request that finds them all busy
waits in arrival order, holding its ingress buffers, so back-pressure reaches the
writer through its credits. A multicast store's ingress buffers are freed when its
last copy leaves; a reduce-load's when the engine takes it; a member's response's as
soon as the engine has it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ualink_ref.node.arbiter import REQUEST, RESPONSE, Copies, Packet
from ualink_ref.node.config import MulticastGroup
from ualink_ref.sizes import TL_HALF_BYTES
from ualink_ref.tl import codec
from ualink_ref.tl.upli import Command, Status

if TYPE_CHECKING:  # the switch owns the engine; only its type is needed here
    from ualink_ref.node.switch import Switch

#: A reduce-load's ``metadata``: the element type its sum is taken in (project choice).
REDUCE_CODES: dict[int, np.dtype[np.generic]] = {1: np.dtype("<i4"), 2: np.dtype("<f4")}
_WRITES = (Command.WRITE, Command.WRITE_FULL)


@dataclass
class _Pending:
    """A request to a group the engine has taken in, not yet started."""

    value: codec.Request
    halves: list[bytes]
    ingress: int
    source: int
    data_credits: int


@dataclass
class _Answer:
    """One member's answer so far: its data beats by index, and its first error status.
    A member may answer a multi-beat read in pieces (specs/tl.md S1-S3); its answer is
    whole once the piece marked ``last`` is in (pieces cross one link in order)."""

    beats: dict[int, bytes] = field(default_factory=dict)
    status: int = Status.OKAY
    done: bool = False


@dataclass
class _Operation:
    """A started multicast store or reduce-load, waiting for its members' answers."""

    request: codec.Request
    ingress: int
    members: tuple[int, ...]
    reduce: np.dtype[np.generic] | None
    answers: dict[int, _Answer] = field(default_factory=dict)  # member -> its answer
    finished: int = 0  # members whose last piece is in


class MulticastEngine:
    """The multicast groups of one switch and the operations on them (S9)."""

    def __init__(self, switch: Switch, groups: Sequence[MulticastGroup], ops: int) -> None:
        self.switch = switch
        self._groups = {g.group: g.members for g in groups}
        self._free_tags: deque[int] = deque(range(ops))
        self._waiting: deque[_Pending] = deque()
        self._ops: dict[tuple[int, int], _Operation] = {}  # (group, engine tag) -> op
        #: Responses to a group the engine was not waiting for (dropped, counted).
        self.stray_answers = 0

    def is_group(self, acc_id: int) -> bool:
        """True when ``acc_id`` names a multicast group of this switch."""
        return acc_id in self._groups

    @property
    def held(self) -> int:
        """Operations waiting or under way (0 once the pod has drained)."""
        return len(self._waiting) + len(self._ops)

    # -- requests to a group ---------------------------------------------------------------

    def accept(self, value: codec.Request, halves: list[bytes], ingress: int, source: int,
               data_credits: int, now: float) -> None:
        """A request to a group has all its data: answer it now if the engine does not
        support it, else start it (or queue it while every operation slot is busy)."""
        supported = (value.cmd in _WRITES
                     or (value.cmd == Command.READ and value.metadata in REDUCE_CODES))
        reachable = all(self.switch.egress_of(m) is not None
                        for m in self._groups[value.dst_acc])
        if not supported or value.asi or not reachable:
            self.switch.release(ingress, source, REQUEST, data_credits, now)
            self._answer(value, ingress, Status.UNSUPPORTED_REQUEST, [], now)
            return
        self._waiting.append(_Pending(value, halves, ingress, source, data_credits))
        self._start_waiting(now)

    def _start_waiting(self, now: float) -> None:
        while self._waiting and self._free_tags:
            pending = self._waiting.popleft()
            tag = self._free_tags.popleft()
            request = pending.value
            members = self._groups[request.dst_acc]
            reduce = REDUCE_CODES.get(request.metadata) if request.cmd == Command.READ else None
            self._ops[(request.dst_acc, tag)] = _Operation(request, pending.ingress, members,
                                                           reduce)
            copies = None
            if request.cmd in _WRITES:
                copies = Copies(len(members))  # the store's buffers go with its last copy
            else:  # a reduce-load holds nothing at ingress once taken in
                self.switch.release(pending.ingress, pending.source, REQUEST,
                                    pending.data_credits, now)
            latency = self.switch.config.latency
            for member in members:
                copy = request._replace(tag=tag, src_acc=request.dst_acc, dst_acc=member,
                                        metadata=0, pool=0, cload=0, cway=0)
                egress = self.switch.egress_of(member)
                assert egress is not None  # accept() answered groups it cannot reach
                self.switch.forward(egress, Packet(
                    value=copy, halves=pending.halves, ingress=pending.ingress,
                    source=pending.source if copies is not None else -1,
                    data_credits=pending.data_credits if copies is not None else 0,
                    ready=now + latency, copies=copies))

    # -- members' answers -----------------------------------------------------------------

    def absorb(self, value: codec.Response, halves: list[bytes], ingress: int, source: int,
               data_credits: int, now: float) -> None:
        """A member's response to the engine: its ingress buffers are freed at once; the
        operation answers its requester once every member has answered."""
        self.switch.release(ingress, source, RESPONSE, data_credits, now)
        self._absorb_answer(value.dst_acc, value.tag, value.src_acc, value.status,
                            value.offset, value.last, halves, now)

    def member_failed(self, group: int, tag: int, member: int, status: Status,
                      now: float) -> None:
        """A copy of operation ``(group, tag)`` could not reach ``member``, whose port has
        faulted (specs/fabric.md H7): that member's answer is ``status``, without data."""
        self._absorb_answer(group, tag, member, status, 0, 1, [], now)

    def members_faulted(self, members: Collection[int], status: Status, now: float) -> None:
        """The ports of ``members`` faulted (H7): every operation still waiting on one of
        them takes ``status`` as that member's answer, so none waits for good."""
        for (group, tag), op in list(self._ops.items()):
            for member in op.members:
                answer = op.answers.get(member)
                if member in members and (answer is None or not answer.done):
                    self._absorb_answer(group, tag, member, status, 0, 1, [], now)

    def _absorb_answer(self, group: int, tag: int, member: int, status: int, offset: int,
                       last: int, halves: list[bytes], now: float) -> None:
        op = self._ops.get((group, tag))
        if op is None or member not in op.members:
            self.stray_answers += 1  # not an answer the engine waits for: counted, dropped
            return
        answer = op.answers.setdefault(member, _Answer())
        if answer.done:
            self.stray_answers += 1
            return
        if status != Status.OKAY and answer.status == Status.OKAY:
            answer.status = status
        for i in range(len(halves) // 2):  # data beats at their offset (rule S1)
            answer.beats[offset + i] = halves[2 * i] + halves[2 * i + 1]
        if not last:
            return  # more pieces of this member's answer to come
        answer.done = True
        op.finished += 1
        if op.finished < len(op.members):
            return
        del self._ops[(group, tag)]
        self._free_tags.append(tag)  # every member's last piece is in: the tag is free
        status = next((op.answers[m].status for m in op.members
                       if op.answers[m].status != Status.OKAY), Status.OKAY)
        halves = []
        if op.reduce is not None and status == Status.OKAY:
            nbytes = (op.request.len + 1) * 4
            beats = (nbytes + 63) // 64
            datas = []
            for m in op.members:
                got = op.answers[m].beats
                if any(b not in got for b in range(beats)):  # a member answered short
                    status = Status.DATA_ERROR
                    break
                datas.append(b"".join(got[b] for b in range(beats))[:nbytes])
        if op.reduce is not None and status == Status.OKAY:
            acc = np.frombuffer(datas[0], dtype=op.reduce).copy()
            for data in datas[1:]:  # in member order (S9)
                acc = acc + np.frombuffer(data, dtype=op.reduce)
            data = acc.tobytes()
            beats = (nbytes + 63) // 64
            data += bytes(beats * 64 - nbytes)
            halves = [data[i:i + TL_HALF_BYTES] for i in range(0, len(data), TL_HALF_BYTES)]
        self._answer(op.request, op.ingress, Status(status), halves, now)
        self._start_waiting(now)

    def _answer(self, request: codec.Request, ingress: int, status: Status,
                halves: list[bytes], now: float) -> None:
        """The engine's one response to ``request``, from the group, to its requester."""
        rd_wr = 0 if request.cmd in (Command.READ, Command.ATOMIC_R) else 1
        beats = len(halves) // 2
        reply = codec.Response(vchan=request.vchan, tag=request.tag, pool=0,
                               len=beats - 1 if beats else 0, offset=0, status=int(status),
                               rd_wr=rd_wr, last=1, src_acc=request.dst_acc,
                               dst_acc=request.src_acc)
        egress = self.switch.egress_of(request.src_acc)
        self.switch.forward(ingress if egress is None else egress, Packet(
            value=reply, halves=halves, ingress=ingress, source=-1, data_credits=0, ready=now))


__all__ = ["REDUCE_CODES", "MulticastEngine"]
