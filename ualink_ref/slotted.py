"""A faster ``__init__`` for the frozen, slotted dataclasses the stack makes per flit or op.

A frozen dataclass's generated ``__init__`` sets each field through
``object.__setattr__`` (the frozen ``__setattr__`` refuses), which looks the slot up
through the class every time: about 0.2 us a field. :func:`direct_init` replaces it
with one that calls each slot's own setter, the same signature and defaults, so a
:class:`~ualink_ref.tl.events.Completion` (one per operation) costs about half as
much to make. Nothing else about the class changes: it stays frozen, compares,
hashes and prints as before.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar

_T = TypeVar("_T", bound=type)


def direct_init(cls: _T) -> _T:
    """Give ``cls`` (a ``@dataclass(frozen=True, slots=True)`` whose generated ``__init__``
    takes exactly its fields, positionally or by keyword, with no ``__post_init__`` and no
    default factories) an ``__init__`` that sets its slots directly; return ``cls``.

    ``TypeError`` for any other class: what the generated ``__init__`` does there
    (keyword-only fields, ``InitVar`` s, a hand-written ``__init__``, ...) is not what
    this one would do.
    """
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or not params.init \
            or "__slots__" not in cls.__dict__ or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: direct_init needs a frozen, slotted dataclass with "
                        "a generated __init__ and no __post_init__")
    generated = cls.__dict__["__init__"]
    fields = dataclasses.fields(cls)
    # The generated __init__ must take the fields and nothing else, in order, each
    # positionally or by keyword: then setting each field's slot is all it does.
    wanted = [(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for f in fields]
    taken = [(p.name, p.kind) for p in inspect.signature(generated).parameters.values()][1:]
    if taken != wanted or any(f.default_factory is not dataclasses.MISSING for f in fields):
        raise TypeError(f"{cls.__name__}: direct_init takes plain fields only (no "
                        "keyword-only fields, InitVars, init=False fields or default factories)")
    # Names the fields cannot take (dunder-prefixed, which a field name never is).
    scope: dict[str, Any] = {"__name__": cls.__module__}
    params_src, body = [], []
    for i, f in enumerate(fields):
        if f.default is dataclasses.MISSING:
            params_src.append(f.name)
        else:
            scope[f"__dc_default{i}"] = f.default
            params_src.append(f"{f.name}=__dc_default{i}")
        scope[f"__dc_set{i}"] = _slot(cls, f.name).__set__  # the slot's own setter
        body.append(f"    __dc_set{i}(__dc_self, {f.name})\n")
    source = (f"def __init__(__dc_self, {', '.join(params_src)}):\n"
              + ("".join(body) or "    pass\n"))
    exec(compile(source, f"<direct_init: {cls.__name__}>", "exec"), scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = generated.__doc__
    init.__annotations__ = dict(generated.__annotations__)
    setattr(cls, "__init__", init)  # noqa: B010 (mypy refuses assigning __init__ directly)
    return cls


def _slot(cls: type, name: str) -> Any:
    """The slot descriptor of field ``name``, on ``cls`` or the class that declared it."""
    for klass in cls.__mro__:
        descriptor = klass.__dict__.get(name)
        if descriptor is not None:
            if type(descriptor).__name__ != "member_descriptor":
                break
            return descriptor
    raise TypeError(f"{cls.__name__}.{name} is not a slot")


__all__ = ["direct_init"]
