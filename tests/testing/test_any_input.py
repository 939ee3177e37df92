"""Every public decoder and entry point outside tl/ raises only UALinkError, for any
input of any type (issue 15, deliverable 4; rule in specs/README.md, "Errors").

Each entry point is listed with valid arguments; the sweep puts every hostile value in
every argument position in turn. A call may succeed (a value that happens to be
acceptable) or raise a ``UALinkError`` subclass — nothing else. A new public name in
the swept modules fails :func:`test_every_public_decoder_is_swept` until it is listed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ualink_ref import dl, phy
from ualink_ref.capture import dissect
from ualink_ref.capture import format as capture_format
from ualink_ref.dl import DataLink, DLFlit, FlitOp, NoOp
from ualink_ref.errors import UALinkError
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.phy import KP4, LL, BitErrorChannel, BurstChannel
from ualink_ref.testing import vectors

GOOD_FLIT = DLFlit(FlitOp.ACK, ack_req_seq=0).encode()
GOOD_WIRE = phy.encode_flits(GOOD_FLIT, "kp4")


class _Weird:
    """An object that is neither bytes, number nor string, and whose methods raise."""

    def __len__(self) -> int:
        raise TypeError("len of a weird object")

    def __index__(self) -> int:
        raise TypeError("index of a weird object")


HOSTILE: list[Any] = [
    None, True, -1, 2**80, 3.5, float("nan"), "x" * 640, "a" * 32, "",
    b"", bytes(3), bytes(639), bytes(641), bytes(681), bytearray(5), memoryview(bytes(10)),
    np.zeros(640, np.uint16), np.zeros((2, 640), np.uint8), np.zeros(640, np.float64),
    np.zeros(0, np.uint8), np.zeros((), np.uint8), np.array(["x"] * 4),
    [1, 2, 3], [b"x"], (None,), {"a": 1}, object(), _Weird(),
]

#: name -> (callable, valid arguments). Methods are bound to a fresh object per call.
ENTRY_POINTS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    # dl
    "DLFlit.decode": (DLFlit.decode, (GOOD_FLIT,)),
    "decode_message": (dl.decode_message, (0,)),
    "encode_message": (dl.encode_message, (NoOp(),)),
    "crc32": (dl.crc32, (b"abc",)),
    "DataLink.receive": (lambda *a: DataLink().receive(*a), (GOOD_FLIT, 0)),
    "DataLink.poll": (lambda *a: DataLink().poll(*a), (0,)),
    "DataLink.send": (lambda *a: DataLink().send(*a), ([bytes(64)],)),
    "DataLink.handle_timer": (lambda *a: DataLink().handle_timer(*a), (0,)),
    # phy
    "decode_flits": (phy.decode_flits, (GOOD_WIRE, "kp4", 1)),
    "encode_flits": (phy.encode_flits, (GOOD_FLIT, "kp4", 1)),
    "wire_bytes_per_flit": (phy.wire_bytes_per_flit, ("kp4",)),
    "KP4.decode": (KP4.decode, (np.zeros((1, 544), np.uint16),)),
    "KP4.encode": (KP4.encode, (np.zeros((1, 514), np.uint16),)),
    "LL.decode": (LL.decode, (np.zeros((1, 272), np.uint16),)),
    "apply_bit_errors": (phy.apply_bit_errors, (bytes(8), [1, 2])),
    "BitErrorChannel.apply": (lambda *a: BitErrorChannel(1e-3, 0).apply(*a), (bytes(80),)),
    "BurstChannel.apply": (lambda *a: BurstChannel(8, 0).apply(*a), (bytes(80),)),
    "post_fec_ber": (phy.post_fec_ber, ("kp4", 1e-5)),
    "flit_loss_ratio": (phy.flit_loss_ratio, ("kp4", 1e-5)),
    "symbol_error_probability": (phy.symbol_error_probability, (1e-5,)),
    # capture
    "CaptureRecord.decode": (capture_format.CaptureRecord.decode,
                             (capture_format.CaptureRecord(GOOD_FLIT).encode(), 0)),
    "decode_capture_file": (capture_format.decode_capture_file,
                            (capture_format.encode_capture([]),)),
    "decode_capture": (capture_format.decode_capture, (capture_format.encode_capture([]),)),
    "iter_capture": (lambda *a: list(capture_format.iter_capture(*a)),
                     (capture_format.encode_capture([]),)),
    "iter_capture_tolerant": (lambda *a: list(capture_format.iter_capture_tolerant(*a)),
                              (capture_format.encode_capture([]),)),
    "iter_capture_file": (lambda *a: list(capture_format.iter_capture_file(*a)),
                          (capture_format.encode_capture([]),)),
    "dissect_records": (dissect.dissect_records,
                        ([capture_format.CaptureRecord(GOOD_FLIT)],)),
    # stack
    "Endpoint.receive": (lambda *a: Endpoint(1).receive(*a), (GOOD_WIRE, 0)),
    "Endpoint.poll": (lambda *a: Endpoint(1).poll(*a), (0,)),
    "Endpoint.poll_many": (lambda *a: Endpoint(1).poll_many(*a), (0, 4)),
}


def _cases() -> list[tuple[str, int, int]]:
    return [(name, pos, k) for name, (_, args) in ENTRY_POINTS.items()
            for pos in range(len(args)) for k in range(len(HOSTILE))]


@pytest.mark.parametrize("name", list(ENTRY_POINTS))
def test_valid_arguments_work(name: str) -> None:
    fn, args = ENTRY_POINTS[name]
    fn(*args)  # the sweep below is only meaningful if the baseline call succeeds


@pytest.mark.parametrize("name, pos", [(n, p) for n, (_, a) in ENTRY_POINTS.items()
                                       for p in range(len(a))])
def test_hostile_argument_raises_only_ualink_errors(name: str, pos: int) -> None:
    fn, args = ENTRY_POINTS[name]
    for value in HOSTILE:
        call = list(args)
        call[pos] = value
        try:
            fn(*call)
        except UALinkError:
            pass
        except Exception as exc:
            pytest.fail(f"{name} with argument {pos} = {value!r:.40} ({type(value).__name__}) "
                        f"raised {type(exc).__name__}: {exc}")


@pytest.mark.parametrize("name", ["read_capture", "verify_dir"])
def test_file_readers_on_hostile_paths(name: str, tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "junk").write_bytes(b"\x00" * 100)
    fn: Callable[[Any], Any] = (capture_format.read_capture if name == "read_capture"
                                else vectors.verify_dir)
    for value in [None, 3, tmp_path / "missing", tmp_path / "dir", tmp_path / "junk",
                  "/dev/zero", "\x00bad", object()]:
        try:
            fn(value)
        except UALinkError:
            pass
        except Exception as exc:
            pytest.fail(f"{name}({value!r:.40}) raised {type(exc).__name__}: {exc}")


def test_every_public_decoder_is_swept() -> None:
    listed = {name.split(".")[-1] for name in ENTRY_POINTS} | {"read_capture", "verify_dir"}
    wanted = set()
    for module in (dl, phy, capture_format, dissect):
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isfunction(obj) and any(w in name for w in ("decode", "read", "dissect",
                                                                    "iter", "parse")):
                wanted.add(name)
    assert wanted <= listed, sorted(wanted - listed)
