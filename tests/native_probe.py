"""Call the compiled modules' public entry points with hostile arguments; print the outcomes.

Run as a script (``python tests/native_probe.py``) once with the native build and
once with ``UALINK_REF_NO_NATIVE=1``: tests/test_native.py compares the two
outputs line by line, so any argument that one build takes and the other
refuses (or refuses with another exception class) shows up by name. A native
build checks declared argument types on entry (and turns a bool given for an
``int`` into that int); the interpreted engine must agree with it.
"""

from __future__ import annotations

import math
import resource
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ualink_ref import _native
from ualink_ref.dl import datalink, flit, segments, transmit, verdict
from ualink_ref.dl.datalink import DataLink
from ualink_ref.dl.flit import DLFlit
from ualink_ref.dl.formats import FlitOp
from ualink_ref.dl.messages import NoOp
from ualink_ref.tl import completer, credits, framing, memory, reassembly
from ualink_ref.tl.credits import CreditConfig
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.transaction import TransactionLayer
from ualink_ref.tl.upli import Status

HUGE = 1 << 70
HOSTILE: tuple[object, ...] = (
    None, True, False, 0, -1, HUGE, 1 << 1100, 1.5, math.nan, math.inf, "x", b"",
    b"\x01" * 64, bytearray(64), memoryview(bytes(32)), [], (1, 2, 3, 4), object(),
    np.float64(3.0), np.float64("nan"), np.int64(5), np.zeros(64, np.uint8),
)
READY_FLIT = bytes(64)
DL_FLIT = DLFlit(FlitOp.EXPLICIT, flit_seq=1, tl=bytes(64)).encode()


def _tl() -> TransactionLayer:
    return TransactionLayer(1)


def _memory() -> Memory:
    m = Memory()
    m.poke(0x1000, bytes(range(64)))
    return m


#: name -> (call taking the argument list, a baseline argument list that works)
ENTRY_POINTS: dict[str, tuple[Callable[..., Any], tuple[object, ...]]] = {
    "TransactionLayer()": (lambda *a: TransactionLayer(*a), (1,)),
    "TransactionLayer(timeout_slots)": (lambda a: TransactionLayer(1, timeout_slots=a), (5.0,)),
    "TransactionLayer(split)": (lambda a: TransactionLayer(1, split=a), ("never",)),
    "TransactionLayer(split_seed)": (lambda a: TransactionLayer(1, split_seed=a), (3,)),
    "TransactionLayer(compress)": (lambda a: TransactionLayer(1, compress=a), (True,)),
    "TransactionLayer(stop_tags)": (lambda a: TransactionLayer(1, stop_tags=a), ((1, 2),)),
    "TransactionLayer(credits)": (lambda a: TransactionLayer(1, credits=a), (CreditConfig(),)),
    "tl.read": (lambda *a: _tl().read(*a), (2, 0x40, 64)),
    "tl.read(vc)": (lambda a: _tl().read(2, 0x40, 64, vc=a), (1,)),
    "tl.read(metadata)": (lambda a: _tl().read(2, 0x40, 64, metadata=a), (7,)),
    "tl.write": (lambda *a: _tl().write(*a), (2, 0x40, bytes(64), None)),
    "tl.write(poison)": (lambda a: _tl().write(2, 0x40, bytes(64), poison=a), (1,)),
    "tl.write(message)": (lambda a: _tl().write(2, 0x40, bytes(64), message=a), (False,)),
    "tl.atomic": (lambda *a: _tl().atomic(*a), (2, 0x40, "add", 5, None, 8, True)),
    "tl.atomic(poison)": (lambda a: _tl().atomic(2, 0x40, "add", 5, poison=a), (0,)),
    "tl.poll": (lambda *a: _tl().poll(*a), (0.0,)),
    "tl.receive": (lambda *a: _tl().receive(*a), (READY_FLIT, 0.0)),
    "tl.run_timer": (lambda *a: _tl().run_timer(*a), (0.0,)),
    "tl.fail_outstanding": (lambda *a: _tl().fail_outstanding(*a), (Status.DATA_ERROR,)),
    "Memory.read": (lambda *a: _memory().read(*a), (0x1000, 8)),
    "Memory.write": (lambda *a: _memory().write(*a), (0x1000, bytes(8), 0xFF)),
    "Memory.peek": (lambda *a: _memory().peek(*a), (0x1000, 8)),
    "Memory.poke": (lambda *a: _memory().poke(*a), (0x1000, bytes(8))),
    "Memory.atomic": (lambda *a: _memory().atomic(*a), (0, 8, 0x1000, 5)),
    "Memory.poison": (lambda *a: _memory().poison(*a), (0x1000, 4)),
    "Memory.poison_bytes": (lambda *a: _memory().poison_bytes(*a), (0x1000, 0b101)),
    "Memory.poison_map": (lambda *a: _memory().poison_map(*a), (0x1000, 8)),
    "Memory.read_with_poison": (lambda *a: _memory().read_with_poison(*a), (0x1000, 8)),
    "Memory.is_mapped": (lambda *a: _memory().is_mapped(*a), (0x1000, 8)),
    "memory.byte_mask": (memory.byte_mask, (0xFF, 8)),
    "CreditConfig": (lambda *a: CreditConfig(*a), ((1, 1, 1, 1), (0, 0, 0, 0))),
    "check_config": (credits.check_config, (CreditConfig(),)),
    "TLDeframer.feed_half": (lambda *a: framing.TLDeframer().feed_half(*a), (bytes(32),)),
    "TLDeframer.feed_data_flit": (
        lambda *a: framing.TLDeframer().feed_data_flit(*a), (bytes(32), bytes(32))),
    "split_flit": (framing.split_flit, (bytes(64),)),
    "pad_control_half": (framing.pad_control_half, ([bytes(4)], 7)),
    "check_split": (completer.check_split, ("random",)),
    "reassembly.Partial": (lambda *a: reassembly.Partial(*a), (2,)),
    # the data link layer
    "DataLink(window)": (lambda a: DataLink(window=a), (64,)),
    "DataLink(replay_timeout)": (lambda a: DataLink(replay_timeout=a), (128.0,)),
    "DataLink(ack_delay)": (lambda a: DataLink(ack_delay=a), (None,)),
    "dl.receive": (lambda *a: DataLink().receive(*a), (DL_FLIT, 0.0)),
    "dl.poll": (lambda *a: DataLink().poll(*a), (0.0,)),
    "dl.send": (lambda *a: DataLink().send(*a), ([bytes(64)],)),
    "dl.send_message": (lambda *a: DataLink().send_message(*a), (NoOp(),)),
    "dl.set_tx_rate": (lambda *a: DataLink().set_tx_rate(*a), (1, 0.0)),
    "dl.handle_timer": (lambda *a: DataLink().handle_timer(*a), (0.0,)),
    "dl.retrained": (lambda *a: DataLink().retrained(*a), (0.0,)),
    "check_time": (datalink.check_time, (0.0,)),
    "DLFlit": (lambda *a: DLFlit(*a), (FlitOp.EXPLICIT, 1, 0, 0, bytes(64))),
    "DLFlit.decode": (DLFlit.decode, (DL_FLIT,)),
    "encode_fields": (flit.encode_fields, (int(FlitOp.EXPLICIT), 1, 0, 0, bytes(64), 0,
                                           (None,) * 5)),
    "capacity": (flit.capacity, ((None,) * 5,)),
    "walk_segments": (segments.walk_segments, (DL_FLIT,)),
    "seq_of": (transmit.seq_of, (700,)),
    "next_seq": (verdict.next_seq, (5,)),
    "implicit_seq": (verdict.implicit_seq, (5, 3)),
}
#: Entry points whose work grows with an integer argument: no astronomically large one.
GROWS_WITH_INTEGERS = frozenset({"Memory.peek", "Memory.poison", "Memory.poison_bytes"})


def _outcome(call: Callable[..., Any], args: list[object]) -> str:
    try:
        call(*args)
    except Exception as exc:  # the class is the outcome compared across builds
        return type(exc).__name__
    return "ok"


def main() -> int:
    """Print one line per (entry point, argument position, hostile value): its outcome."""
    # Work that grows without end becomes a MemoryError here, not a machine out of memory.
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = 4 << 30 if hard == resource.RLIM_INFINITY else min(4 << 30, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    print(f"# native: {_native.status().active}")
    print(f"# values: {len(HOSTILE)}")
    for name, (call, baseline) in ENTRY_POINTS.items():
        print(f"{name} baseline: {_outcome(call, list(baseline))}")
        for position in range(len(baseline)):
            for index, value in enumerate(HOSTILE):
                if name in GROWS_WITH_INTEGERS and isinstance(value, int) and value >= HUGE:
                    continue
                args = list(baseline)
                args[position] = value
                print(f"{name} arg{position}={index}:{type(value).__name__}: "
                      f"{_outcome(call, args)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
