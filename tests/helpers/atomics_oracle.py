"""An independent oracle for the UPLI atomics: C fixed-width integer semantics via ctypes."""

from __future__ import annotations

import ctypes

from ualink_ref.tl import AtomicOp

C_TYPES = {4: (ctypes.c_uint32, ctypes.c_int32), 8: (ctypes.c_uint64, ctypes.c_int64)}


def ctypes_reference(op: AtomicOp, size: int, old: int, operand: int, compare: int) -> int:
    """An independent reference: C fixed-width integer semantics via ctypes."""
    u, s = C_TYPES[size]
    if op == AtomicOp.ADD:
        return u(old + operand).value
    if op == AtomicOp.SWAP:
        return operand
    if op == AtomicOp.CAS:
        return operand if old == compare else old
    if op in (AtomicOp.AND, AtomicOp.OR, AtomicOp.XOR):
        return {AtomicOp.AND: old & operand, AtomicOp.OR: old | operand,
                AtomicOp.XOR: old ^ operand}[op]
    if op in (AtomicOp.UMIN, AtomicOp.UMAX):
        return (min if op == AtomicOp.UMIN else max)(old, operand)
    a, b = s(old).value, s(operand).value
    return u((min if op == AtomicOp.SMIN else max)(a, b)).value
