"""The half-flit walk (``TLDeframer``) against a plain model of framing rules 1-4.

The model below is written from the rules in ``ualink_ref/tl/framing.py``'s
docstring, not from the walk's code: a list of every field read so far, each
with the data half-flits it needs; a data half-flit goes to the first field
short of data; a field is done when it and every field before it have their
data. Streams are random control half-flits (undecodable ones included), each
followed by the data half-flits its fields need.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from ualink_ref.errors import DecodeError
from ualink_ref.testing.strategies import tl_control_halves
from ualink_ref.tl.codec import Request, decode_control_half, pack_field
from ualink_ref.tl.framing import TLDeframer, data_halves
from ualink_ref.tl.upli import Command


class _Model:
    def __init__(self, owed: int) -> None:
        # [sector, value, need, data]; value None: data owed from before the walk
        self.fields: list[list[Any]] = [[-1, None, owed, []]] if owed else []
        self.handed = 0  # fields already returned as done

    def owed(self) -> int:
        return sum(f[2] - len(f[3]) for f in self.fields)

    def feed(self, half: bytes) -> tuple[list[Any], list[Any]]:
        started: list[list[Any]] = []
        if self.owed():
            short = next(f for f in self.fields if len(f[3]) < f[2])
            short[3].append(half)
        else:
            decoded = decode_control_half(half)  # raises before anything changes
            needs = [data_halves(value) for _, value in decoded]
            started = [[s, v, n, []] for (s, v), n in zip(decoded, needs, strict=True)]
            self.fields.extend(started)
        done = []
        while self.handed < len(self.fields):
            f = self.fields[self.handed]
            if len(f[3]) < f[2]:
                break
            done.append(f)
            self.handed += 1
        return started, done


def _view(pendings: Any) -> list[tuple[int, Any, int, list[bytes]]]:
    return [(p.sector, p.value, p.need, list(p.data)) for p in pendings]


def _model_view(fields: list[list[Any]]) -> list[tuple[int, Any, int, list[bytes]]]:
    return [(f[0], f[1], f[2], list(f[3])) for f in fields]


@st.composite
def _streams(draw: st.DrawFn) -> tuple[int, list[bytes]]:
    owed = draw(st.integers(0, 3))
    halves = [bytes([0xD0 + i]) * 32 for i in range(owed)]
    for _ in range(draw(st.integers(1, 12))):
        if draw(st.booleans()):
            half = draw(tl_control_halves())
        else:
            half = draw(st.binary(min_size=32, max_size=32))  # often undecodable
        halves.append(half)
        try:
            need = sum(data_halves(v) for _, v in decode_control_half(half))
        except DecodeError:
            continue
        halves.extend(draw(st.binary(min_size=32, max_size=32)) for _ in range(need))
    return owed, halves


@given(_streams())
def test_walk_matches_the_rules(stream: tuple[int, list[bytes]]) -> None:
    owed, halves = stream
    walk, model = TLDeframer(owed), _Model(owed)
    for half in halves:
        try:
            want = model.feed(half)
        except DecodeError as exc:
            pending = walk.pending
            try:
                walk.feed_half(half)
            except DecodeError as got:
                assert str(got) == str(exc)
            else:
                raise AssertionError("the walk took an undecodable control half-flit")
            assert walk.pending == pending  # state unchanged (rule E7 is the caller's)
            continue
        started, done = walk.feed_half(half)
        assert (_view(started), _view(done)) == (_model_view(want[0]), _model_view(want[1]))
        assert walk.pending == model.owed()
        assert walk.next_is_data() == (model.owed() > 0)


def _two_writes_after_one_owed() -> tuple[int, list[bytes]]:
    """One data half-flit owed from before, then a control half-flit with two partial
    Writes (3 data half-flits each): pair (A3, B1) splits across the two fields."""
    write = Request(int(Command.WRITE), 0, 0, 1, 0, 0, 15, 0, 0x1000, 1, 2, 0, 0, 0)
    ctrl = (pack_field(write) + pack_field(write._replace(tag=2))).ljust(32, b"\0")
    return 1, [b"\xd0" * 32, ctrl] + [bytes([i]) * 32 for i in range(1, 7)]


@given(_streams())
@example(_two_writes_after_one_owed())
def test_data_flit_step_matches_the_rules(stream: tuple[int, list[bytes]]) -> None:
    """The TL engine's way through a stream: ``feed_data_flit`` on each pair of
    half-flits, which takes the pair only when both are data and then hands back what
    the model's two steps do; otherwise (nothing taken) ``feed_half`` on each half."""
    owed, halves = stream
    walk, model = TLDeframer(owed), _Model(owed)
    pairs = [(halves[i], halves[i + 1]) for i in range(0, len(halves) - 1, 2)]
    for first, second in pairs:
        both_data = model.owed() >= 2
        done = walk.feed_data_flit(first, second)
        if both_data:
            want = model.feed(first)[1] + model.feed(second)[1]
            assert done is not None and _view(done) == _model_view(want)
            assert walk.pending == model.owed()
            continue
        assert done is None and walk.pending == model.owed()  # nothing taken
        for half in (first, second):
            try:
                want_started, want_done = model.feed(half)
            except DecodeError:
                return  # the engine fails the link here (rule E7): the stream ends
            started, done_now = walk.feed_half(half)
            assert (_view(started), _view(done_now)) == (
                _model_view(want_started), _model_view(want_done))
