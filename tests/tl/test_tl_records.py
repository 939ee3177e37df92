"""tl/records.py: keyword constructors build the same values as the class, and refuse
what is not a NamedTuple class."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ualink_ref.tl.codec import Request
from ualink_ref.tl.op import Op, new_op
from ualink_ref.tl.records import keyword_constructor

FIELDS = dict(cmd=3, vchan=1, asi=0, tag=77, pool=1, attr=0, len=15, metadata=9,
              addr=0x1234_5000, src_acc=4, dst_acc=5, cload=1, cway=2, numbeats=0)


def test_keyword_constructor_builds_what_the_class_builds() -> None:
    made = keyword_constructor(Request)(**FIELDS)
    assert made == Request(**FIELDS) and type(made) is Request
    assert made.tag == 77 and made.addr == 0x1234_5000


def test_keyword_constructor_keeps_the_class_signature() -> None:
    make = keyword_constructor(Request)
    with pytest.raises(TypeError):
        make(**FIELDS, spare=1)  # type: ignore[call-arg]  # not a field: mypy says so too
    missing = dict(FIELDS)
    del missing["tag"]
    with pytest.raises(TypeError):
        make(**missing)


def test_new_op_is_an_op() -> None:
    op = new_op(handle=1, cmd=41, dst=2, addr=0x100, nbytes=0, len_field=15, numbeats=0,
                halves=[b"\0" * 32] * 2, data_credits=1, attr=0, vc=0, metadata=0,
                rsp_beats=0)
    assert type(op) is Op and op.handle == 1 and op.dst == 2 and len(op.halves) == 2


def test_keyword_constructor_refuses_other_classes() -> None:
    @dataclass
    class Plain:
        a: int

    with pytest.raises(TypeError, match="not a NamedTuple"):
        keyword_constructor(Plain)  # type: ignore[type-var]
    with pytest.raises(TypeError, match="not a NamedTuple"):
        keyword_constructor(tuple)  # type: ignore[type-var]
