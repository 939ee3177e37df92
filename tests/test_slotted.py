"""direct_init: the same construction as a frozen dataclass's own __init__, only faster."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import InitVar, dataclass, field
from typing import Any

import pytest

from ualink_ref.dl.events import TLFlitDelivered
from ualink_ref.slotted import direct_init
from ualink_ref.tl.events import Completion
from ualink_ref.tl.upli import Status


def _value_class(name: str) -> Any:
    """A fresh frozen, slotted dataclass named ``name`` (a module global, so it pickles):
    one is left as made, one given direct_init."""

    @dataclass(frozen=True, slots=True)
    class Value:
        a: int
        b: str
        c: bytes | None = None
        d: int = 7

    Value.__name__ = Value.__qualname__ = name
    return Value


_Plain = _value_class("_Plain")
_Direct = direct_init(_value_class("_Direct"))


CALLS = [((1, "x"), {}), ((1, "x", b"y"), {}), ((1, "x", None, 9), {}),
         ((1,), {"b": "x", "d": 2}), ((), {"a": 3, "b": "z", "c": b""})]


@pytest.mark.parametrize("args,kwargs", CALLS)
def test_direct_init_builds_what_the_generated_init_builds(args: tuple[Any, ...],
                                                          kwargs: dict[str, Any]) -> None:
    plain, direct = _Plain(*args, **kwargs), _Direct(*args, **kwargs)
    assert dataclasses.astuple(plain) == dataclasses.astuple(direct)
    assert repr(plain).replace("_Plain", "_Direct") == repr(direct)
    assert direct == _Direct(*args, **kwargs) and hash(direct) == hash(_Direct(*args, **kwargs))
    assert pickle.loads(pickle.dumps(direct)) == direct


@pytest.mark.parametrize("args,kwargs", [((), {}), ((1,), {}), ((1, "x", None, 9, 0), {}),
                                         ((1, "x"), {"e": 1}), ((1, "x"), {"a": 2})])
def test_direct_init_refuses_the_calls_the_generated_init_refuses(args: tuple[Any, ...],
                                                                  kwargs: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        _Plain(*args, **kwargs)
    with pytest.raises(TypeError):
        _Direct(*args, **kwargs)


def test_direct_init_keeps_the_class_frozen_and_slotted() -> None:
    value = _Direct(1, "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.a = 2  # type: ignore[misc]
    assert not hasattr(value, "__dict__")
    assert dataclasses.replace(value, d=1) == _Direct(1, "x", None, 1)


def test_the_stack_events_that_use_it_build_as_before() -> None:
    done = Completion(4, Status.DATA_ERROR, None, "why", poisoned=2)
    assert (done.handle, done.status, done.data, done.error, done.poisoned) == (
        4, Status.DATA_ERROR, None, "why", 2)
    assert Completion(1, Status.OKAY, b"ab") == Completion(handle=1, status=Status.OKAY,
                                                           data=b"ab", error=None, poisoned=0)
    assert TLFlitDelivered(b"\x01" * 64).data == b"\x01" * 64
    for cls in (Completion, TLFlitDelivered):
        assert "direct_init" in cls.__init__.__code__.co_filename
    # introspection reads as the generated __init__ did
    assert str(inspect.signature(Completion)) == (
        "(handle: 'int', status: 'Status', data: 'bytes | None', error: 'str | None' = None, "
        "poisoned: 'int' = 0) -> None")


def test_direct_init_takes_any_field_names_and_inherited_slots() -> None:
    @direct_init
    @dataclass(frozen=True, slots=True)
    class Odd:
        self: int  # type: ignore[misc]
        set1: int = 2
        default0: int = 3

    @dataclass(frozen=True, slots=True)
    class Base:
        a: int

    @direct_init
    @dataclass(frozen=True, slots=True)
    class Derived(Base):
        b: int = 5

    odd = Odd(1)
    assert (odd.self, odd.set1, odd.default0) == (1, 2, 3)
    assert Odd(self=4, set1=5, default0=6) == Odd(4, 5, 6)
    assert (Derived(1).a, Derived(1).b, Derived(2, 3)) == (1, 5, Derived(a=2, b=3))


def test_direct_init_refuses_classes_it_would_change() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclass(slots=True)
    class NotFrozen:
        a: int

    @dataclass(frozen=True, slots=True)
    class Factory:
        a: list[int] = field(default_factory=list)

    @dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True, init=False)
    class OwnInit:
        a: int

        def __init__(self, a: int) -> None:
            object.__setattr__(self, "a", 2 * a)

    @dataclass(frozen=True, slots=True, kw_only=True)
    class KeywordOnly:
        a: int

    @dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int
        scale: InitVar[int] = 1

    @dataclass(frozen=True, slots=True)
    class NotInInit:
        a: int
        b: int = field(default=0, init=False)

    for cls in (NoSlots, NotFrozen, Factory, PostInit, OwnInit, KeywordOnly, WithInitVar,
                NotInInit, int):
        with pytest.raises(TypeError):
            direct_init(cls)
    assert OwnInit(2).a == 4  # refused, so left as it was
