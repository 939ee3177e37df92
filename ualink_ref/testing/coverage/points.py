"""The declared coverage model: rules, fields, error classes, crosses (specs/coverage.md).

:func:`coverage_model` builds it once. Rule points come from
:mod:`~ualink_ref.testing.coverage.rules`, field points from the format
declarations (:mod:`~ualink_ref.testing.coverage.fields`); the error point has a
bin per class of :mod:`ualink_ref.errors`; the crosses are the ones a verification
plan asks for, each named ``cross:<what>`` with its bins ``a/b[/c]``. Waivers of
fields, errors and crosses are in :mod:`~ualink_ref.testing.coverage.waivers`.
"""

from __future__ import annotations

from functools import cache

from ualink_ref import errors
from ualink_ref.dl.receive import RX_TRANSITIONS
from ualink_ref.testing.coverage.fields import field_points
from ualink_ref.testing.coverage.model import CoverageModel, CoverPoint
from ualink_ref.testing.coverage.rules import rule_points
from ualink_ref.testing.coverage.waivers import WAIVERS
from ualink_ref.tl.fields import COMMANDS
from ualink_ref.tl.upli import ATOMIC_SIZES, AtomicOp

ERROR_POINT = "error:class"
#: Every error class of the one exception tree (every UALinkError class errors.py defines).
ERROR_CLASSES: tuple[str, ...] = tuple(sorted(
    name for name, obj in vars(errors).items()
    if isinstance(obj, type) and issubclass(obj, errors.UALinkError)))

FEC_MODES = ("kp4", "ll", "none")
INTERLEAVES = (1, 2, 4)
#: Size classes of a read or write request on the wire (bytes = 4 x (len + 1)).
SIZE_CLASSES = ("le8B", "9to64B", "65to256B")
#: Error-count classes of an RS decode (t = the code's correction capability).
ERROR_COUNTS = ("0", "1_to_t-1", "t", "t+1_to_2t-1", "2t_or_more")

FLIT_CODEC = "cross:phy.flit_codec"
RS_DECODE = "cross:phy.rs_decode"
COMMAND_SIZE_FEC = "cross:upli.command_size_fec"
ATOMIC_OP_SIZE = "cross:upli.atomic_op_size"
DL_RECEIVE = "cross:dl.receive"


def _flit_codec_bins() -> tuple[str, ...]:
    bins = [f"{kind}/{mode}/il{n}" for kind in ("flit_encode", "flit_decode")
            for mode in ("kp4", "ll") for n in INTERLEAVES]
    return (*bins, "flit_encode/none/il1", "flit_decode/none/il1")  # none: no interleave


def _command_bins() -> tuple[str, ...]:
    out = []
    for fec in FEC_MODES:
        for name in COMMANDS.values():
            sizes = ("operand",) if name.startswith("Atomic") else SIZE_CLASSES
            out += [f"{name}/{size}/{fec}" for size in sizes]
    return tuple(out)


def _crosses() -> list[CoverPoint]:
    return [
        CoverPoint(FLIT_CODEC, "cross", _flit_codec_bins(),
                   "PHY flit codec: operation x FEC mode x symbol interleave"),
        CoverPoint(RS_DECODE, "cross",
                   tuple(f"{code}/{n}" for code in ("kp4", "ll") for n in ERROR_COUNTS),
                   "RS decode: code x symbol errors injected (t = 15 for kp4, 7 for ll)"),
        CoverPoint(COMMAND_SIZE_FEC, "cross", _command_bins(),
                   "UPLI request on a link: command x size class x FEC mode"),
        CoverPoint(ATOMIC_OP_SIZE, "cross",
                   tuple(f"{op.name}/{size}" for op in AtomicOp for size in ATOMIC_SIZES),
                   "atomic operation x operand size"),
        CoverPoint(DL_RECEIVE, "cross",
                   tuple(f"{s.value}/{i.value}" for s, i in RX_TRANSITIONS),
                   "DL receive table (specs/dl.md section 6): replay state x input"),
    ]


@cache
def coverage_model() -> CoverageModel:
    """The whole declared model (built once)."""
    points = [*rule_points(), *field_points(),
              CoverPoint(ERROR_POINT, "error", ERROR_CLASSES,
                         "every class of ualink_ref.errors"),
              *_crosses()]
    return CoverageModel(_with_waivers(points))


def _with_waivers(points: list[CoverPoint]) -> list[CoverPoint]:
    by_name = {p.name: p for p in points}
    unknown = sorted(set(WAIVERS) - set(by_name))
    if unknown:
        raise ValueError(f"waivers for undeclared cover points: {unknown}")
    out = []
    for p in points:
        extra = WAIVERS.get(p.name, {})
        if extra:
            p = CoverPoint(p.name, p.group, p.bins, p.description, {**p.waivers, **extra})
        out.append(p)
    return out


__all__ = ["ATOMIC_OP_SIZE", "COMMAND_SIZE_FEC", "DL_RECEIVE", "ERROR_CLASSES", "ERROR_COUNTS",
           "ERROR_POINT", "FEC_MODES", "FLIT_CODEC", "RS_DECODE", "SIZE_CLASSES",
           "coverage_model"]
