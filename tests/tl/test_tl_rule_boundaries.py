"""Split-response reassembly (specs/tl.md S4-S7, P3) pinned at its edges, on
``tl/reassembly.py``'s ``add_piece`` / ``completion``.

Each test names the developer's bug it catches (issue 26); ``fuzz/mutation_sample.py
--hand`` replays the hand-made ones.
"""

from __future__ import annotations

import pytest

from ualink_ref.errors import ResponseMismatchError
from ualink_ref.tl.reassembly import Partial, add_piece, completion
from ualink_ref.tl.upli import Status

OKAY, DATA_ERROR = int(Status.OKAY), int(Status.DATA_ERROR)
TAG = 7


def _beat(i: int) -> bytes:
    """Beat i: 32 bytes of 2i + 1, then 32 bytes of 2i + 2 (every half-flit distinct)."""
    return bytes([2 * i + 1]) * 32 + bytes([2 * i + 2]) * 32


def _halves(first: int, count: int) -> list[bytes]:
    """The data half-flits of beats ``first`` .. ``first + count - 1``."""
    return [_beat(i)[h * 32:(h + 1) * 32] for i in range(first, first + count) for h in (0, 1)]


def _okay(partial: Partial, offset: int, count: int, last: int, n: int = 4) -> object:
    return add_piece(partial, TAG, offset, last, OKAY, count, count, n, _halves(offset, count))


#: What each rule's error says it expected (4-beat reads unless stated).
EXPECTED = {"beats answered twice": "none", "last beat": "0..3", "beats": "1 or more",
            "beats missing at last": "none", "last": 1,
            "offset/last of a write-type response": (0, 1)}


def _field(err: object) -> tuple[str, object]:
    assert isinstance(err, ResponseMismatchError)
    assert err.tag == TAG
    assert err.expected == EXPECTED[err.field], err
    return err.field, err.got


@pytest.mark.parametrize(("first", "second", "overlap"), [
    ((1, 2), (0, 2), 0x2),  # beats 1-2, then 0-1: beat 1 twice (not the piece's first beat)
    ((0, 2), (1, 2), 0x2),  # beats 0-1, then 1-2: the second piece's first beat
    ((0, 1), (0, 3), 0x1),
    ((3, 1), (0, 4), 0x8),  # only the last beat of the second piece overlaps
])
def test_s4_overlap_on_any_beat_is_refused(first: tuple[int, int], second: tuple[int, int],
                                           overlap: int) -> None:
    # Bug caught: the overlap check tests only the piece's first beat.
    partial = Partial(4)
    assert _okay(partial, *first, last=0) is None
    assert _field(_okay(partial, *second, last=1)) == ("beats answered twice", f"{overlap:#x}")
    assert partial.got == ((1 << first[1]) - 1) << first[0]  # the bad piece took nothing


def test_s4_adjacent_pieces_do_not_overlap() -> None:
    partial = Partial(4)
    assert _okay(partial, 1, 2, last=0) is None
    assert _okay(partial, 3, 1, last=0) is None
    assert _okay(partial, 0, 1, last=1) is None
    done = completion(9, 256, partial)
    assert (done.handle, done.status, done.data) == (9, Status.OKAY, b"".join(
        _beat(i) for i in range(4)))


@pytest.mark.parametrize(("offset", "count", "bad"), [(2, 2, None), (3, 2, 4), (0, 4, None),
                                                     (1, 4, 4), (3, 1, None)])
def test_s4_range_last_beat_at_most_beats_minus_one(offset: int, count: int,
                                                    bad: int | None) -> None:
    partial = Partial(4)
    err = _okay(partial, offset, count, last=int(offset + count == 4 and offset == 0))
    if bad is None:
        assert err is None
    else:
        assert _field(err) == ("last beat", bad)


def test_s4_a_non_okay_piece_answers_its_span_not_its_carried_beats() -> None:
    # A DATA_ERROR piece carries nothing (framing rule); its len still counts (S1).
    partial = Partial(4)
    assert add_piece(partial, TAG, 0, 0, DATA_ERROR, 0, 2, 4, []) is None
    assert partial.got == 0b0011 and partial.poisoned == 0b0011
    assert _field(add_piece(partial, TAG, 2, 1, DATA_ERROR, 0, 3, 4, [])) == ("last beat", 4)


def test_s1_an_okay_piece_without_data_is_refused() -> None:
    assert _field(add_piece(Partial(2), TAG, 0, 1, OKAY, 0, 2, 2, [])) == ("beats", 0)


@pytest.mark.parametrize(("offset", "last"), [(0, 0), (1, 1)])
def test_s5_a_write_type_answer_is_never_split(offset: int, last: int) -> None:
    err = add_piece(Partial(0), TAG, offset, last, OKAY, 0, 1, 0, [])
    assert _field(err) == ("offset/last of a write-type response", (offset, last))


def test_s6_last_with_a_gap_names_the_missing_beats() -> None:
    partial = Partial(4)
    assert _okay(partial, 0, 1, last=0) is None
    assert _field(_okay(partial, 2, 1, last=1)) == ("beats missing at last", "0xa")


def test_s6_full_coverage_without_last_is_refused() -> None:
    partial = Partial(4)
    assert _okay(partial, 0, 3, last=0) is None
    assert _field(_okay(partial, 3, 1, last=0)) == ("last", 0)


def test_s7_p3_poisoned_beats_in_the_completion() -> None:
    partial = Partial(3)
    assert add_piece(partial, TAG, 1, 0, DATA_ERROR, 0, 1, 3, []) is None
    assert _okay(partial, 2, 1, last=0, n=3) is None
    assert _okay(partial, 0, 1, last=1, n=3) is None
    done = completion(12, 192, partial)
    assert done.handle == 12 and done.status is Status.DATA_ERROR and done.poisoned == 0b010
    assert done.data == _beat(0) + bytes(64) + _beat(2)  # zeros where poisoned


def test_s7_p3_every_beat_poisoned_has_no_data() -> None:
    partial = Partial(2)
    assert add_piece(partial, TAG, 0, 0, DATA_ERROR, 0, 1, 2, []) is None
    assert add_piece(partial, TAG, 1, 1, DATA_ERROR, 0, 1, 2, []) is None
    done = completion(1, 128, partial)
    assert (done.status, done.data, done.poisoned) == (Status.DATA_ERROR, None, 0b11)


def test_s7_the_first_other_status_wins_over_poison_and_okay() -> None:
    partial = Partial(3)
    assert add_piece(partial, TAG, 0, 0, DATA_ERROR, 0, 1, 3, []) is None
    assert add_piece(partial, TAG, 1, 0, int(Status.UNSUPPORTED_REQUEST), 0, 1, 3, []) is None
    assert add_piece(partial, TAG, 2, 1, int(Status.DECODE_ERROR), 0, 1, 3, []) is None
    done = completion(11, 192, partial)
    assert (done.handle, done.status, done.data) == (11, Status.UNSUPPORTED_REQUEST, None)


def test_s7_a_short_read_is_cut_to_its_bytes() -> None:
    partial = Partial(1)
    assert _okay(partial, 0, 1, last=1, n=1) is None
    assert completion(1, 5, partial).data == b"\x01" * 5
    partial = Partial(2)
    assert _okay(partial, 0, 2, last=1, n=2) is None
    assert completion(1, 100, partial).data == (_beat(0) + _beat(1))[:100]
