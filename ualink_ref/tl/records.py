"""Keyword construction of the TL's per-operation records at the cost of a plain call.

Each operation builds a few records (its :class:`~ualink_ref.tl.op.Op`, a received
request expanded from the address cache, the response queued for it, the response
received). They are built with every field named, so that no two fields can be
swapped silently. On CPython 3.11, calling a class with keywords first gathers the
keywords into a dictionary (the class call's slow path), which costs more than the
rest of building a 14-field record; calling the class's ``__new__`` itself with the
same keywords does not. :func:`keyword_constructor` gives that call a name, so call
sites still read ``new_op(handle=..., cmd=..., ...)`` and mypy still checks every
keyword against the class.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import NamedTuple, ParamSpec, TypeVar, cast

_P = ParamSpec("_P")
_T = TypeVar("_T", bound=NamedTuple)


def keyword_constructor(cls: Callable[_P, _T]) -> Callable[_P, _T]:
    """``cls`` (a NamedTuple class) as a constructor with its own signature:
    ``keyword_constructor(cls)(**fields) == cls(**fields)``."""
    if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
        raise TypeError(f"{cls!r} is not a NamedTuple class")
    return cast("Callable[_P, _T]", partial(cls.__new__, cls))


__all__ = ["keyword_constructor"]
