"""The requests a switch has forwarded and not yet seen answered (specs/fabric.md H3, H7).

Per originator ID the switch keeps one slot per wire tag (2,048): the target the
request went to, and what an answer to it must look like. A response is
forwarded only when it answers such a slot (H3: a response for a tag never
issued is dropped); a target port that faults ends every slot naming it with an
error answer from the switch (H7). The table has a fixed size — ``NUM_TAGS``
slots per originator routed through the switch — whatever a peer sends.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Collection, Iterable

from ualink_ref.tl import codec
from ualink_ref.tl.upli import NUM_TAGS, Command, Status

_EMPTY = -1
_TARGET_BITS = 10  # accelerator IDs (and group IDs) are 10 bits
_TARGET_MASK = (1 << _TARGET_BITS) - 1


def _slot(request: codec.Request) -> int:
    """A request's slot value: target ID, VC, rd_wr of its answer and its beats."""
    rd_wr = 0 if request.cmd in (Command.READ, Command.ATOMIC_R) else 1
    beats = request.len // 16 if request.cmd == Command.READ else 0
    return (request.dst_acc | request.vchan << _TARGET_BITS | rd_wr << (_TARGET_BITS + 2)
            | (beats & 3) << (_TARGET_BITS + 3))


class OutstandingTags:
    """Outstanding tags per originator ID (H3), a fixed table per ID in ``originators``."""

    def __init__(self, originators: Iterable[int]) -> None:
        # 16-bit slots (a slot's value takes 15 bits): 4 KiB per originator.
        self._tables = {acc: array("h", [_EMPTY]) * NUM_TAGS for acc in originators}
        # Per target ID, its outstanding (originator, tag) slots: a faulted port's ops are
        # found without walking every originator's 2,048 tags (H7 at 1,024 ports). Bounded
        # like the tables: each slot in use is in exactly one set.
        self._per_target: defaultdict[int, set[tuple[int, int]]] = defaultdict(set)
        self._order = {acc: i for i, acc in enumerate(self._tables)}
        self._count = 0

    @property
    def count(self) -> int:
        """Slots in use over every originator (at most ``capacity``)."""
        return self._count

    @property
    def capacity(self) -> int:
        """The table's fixed size: ``NUM_TAGS`` slots per originator."""
        return NUM_TAGS * len(self._tables)

    def issue(self, request: codec.Request) -> None:
        """``request`` leaves for its target: its tag is outstanding (a tag reused while
        outstanding — only a hostile originator does so — takes the slot over)."""
        table = self._tables.get(request.src_acc)
        if table is None:
            return
        key = (request.src_acc, request.tag)
        old = table[request.tag]
        if old == _EMPTY:
            self._count += 1
        else:
            self._unindex(old & _TARGET_MASK, key)
        value = _slot(request)
        table[request.tag] = value
        self._per_target[request.dst_acc].add(key)

    def matches(self, response: codec.Response) -> bool:
        """True when ``response`` answers an outstanding request (same originator, tag
        and target); the slot stays (H3: checked when the response's field starts)."""
        table = self._tables.get(response.dst_acc)
        if table is None:
            return False
        value = table[response.tag]
        return value != _EMPTY and value & _TARGET_MASK == response.src_acc

    def answer(self, response: codec.Response) -> bool:
        """:meth:`matches`, and the ``last`` piece frees the slot: called when the
        response is forwarded with all its data (H3). Until then the slot stays, so a
        target that faults before its data arrives still has the op answered (H7)."""
        if not self.matches(response):
            return False
        if response.last:
            self._clear(response.dst_acc, response.tag)
        return True

    def _unindex(self, target: int, key: tuple[int, int]) -> None:
        slots = self._per_target[target]
        slots.discard(key)
        if not slots:
            del self._per_target[target]

    def _clear(self, originator: int, tag: int) -> None:
        table = self._tables[originator]
        self._unindex(table[tag] & _TARGET_MASK, (originator, tag))
        table[tag] = _EMPTY
        self._count -= 1

    def outstanding_to(self, target: int) -> frozenset[tuple[int, int]]:
        """The (originator, tag) slots outstanding to ``target`` (the per-target index)."""
        return frozenset(self._per_target.get(target, ()))

    def forget_originator(self, acc_id: int) -> None:
        """``acc_id``'s port faulted: nothing can reach it any more, drop its slots."""
        table = self._tables.get(acc_id)
        if table is None:
            return
        for tag, value in enumerate(table):
            if value != _EMPTY:
                self._clear(acc_id, tag)

    def fail_targets(self, targets: Collection[int], status: Status) -> list[codec.Response]:
        """Every request outstanding to an ID in ``targets`` (a port that faulted) ends:
        the answers the switch sends in their place (H7), slots freed."""
        keys = [key for t in set(targets) for key in self._per_target.get(t, ())]
        # Answers in originator then tag order, as a walk of the tables would give them.
        keys.sort(key=lambda k: (self._order[k[0]], k[1]))
        out = []
        for originator, tag in keys:
            value = self._tables[originator][tag]
            out.append(codec.Response(
                vchan=value >> _TARGET_BITS & 3, tag=tag, pool=0,
                len=value >> (_TARGET_BITS + 3) & 3, offset=0, status=int(status),
                rd_wr=value >> (_TARGET_BITS + 2) & 1, last=1,
                src_acc=value & _TARGET_MASK, dst_acc=originator))
            self._clear(originator, tag)
        return out


__all__ = ["OutstandingTags"]
