"""``ualink-ref dl decode``."""

from __future__ import annotations

from pathlib import Path

import pytest

from ualink_ref.cli import main
from ualink_ref.dl import DLFlit, FlitOp, TLRateNotification


def test_decode_prints_fields(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    flit = DLFlit(FlitOp.EXPLICIT, flit_seq=7, tl=bytes(range(200)) * 3 + bytes(24),
                  first_tl_start=8, messages=(None, TLRateNotification(9).encode(), None,
                                              None, None)).encode()
    assert main(["dl", "decode", flit.hex()]) == 0
    out = capsys.readouterr().out
    assert "op=explicit(0)" in out and "flit_seq=0x7" in out
    assert "TLRateNotification(rate=9)" in out
    assert "TL flits start at byte offsets [12, 76" in out
    (tmp_path / "f.bin").write_bytes(flit)
    assert main(["dl", "decode", str(tmp_path / "f.bin")]) == 0


def test_decode_bad_crc_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    flit = bytearray(DLFlit(FlitOp.ACK, ack_req_seq=1).encode())
    flit[5] ^= 1
    assert main(["dl", "decode", flit.hex()]) == 1
    assert "CRC mismatch" in capsys.readouterr().err
    assert main(["dl", "decode", "zz"]) == 2


def test_decode_binary_file_whose_bytes_are_all_ascii(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Found in review: a binary flit file with every byte < 0x80 (about 1 ack-only
    # flit in 16, e.g. this one) was taken for hex text and rejected as "not hex".
    flit = DLFlit(FlitOp.ACK, ack_req_seq=2).encode()
    assert max(flit) < 0x80
    (tmp_path / "ack.bin").write_bytes(flit)
    assert main(["dl", "decode", str(tmp_path / "ack.bin")]) == 0
    assert "op=ack(2)" in capsys.readouterr().out
    (tmp_path / "ack.hex").write_text(flit.hex() + "\n")  # hex text files still work
    assert main(["dl", "decode", str(tmp_path / "ack.hex")]) == 0


@pytest.mark.parametrize("as_hex", [False, True])
def test_decode_reads_binary_or_hex_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], as_hex: bool
) -> None:
    # Found in review: binary on stdin was rejected as "not hex" (help promises a
    # binary file or stdin alike).
    import io
    import sys

    flit = DLFlit(FlitOp.EXPLICIT, flit_seq=9, tl=bytes(range(192, 256)) * 2).encode()
    raw = (flit.hex() + "\n").encode() if as_hex else flit
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    assert main(["dl", "decode", "-"]) == 0
    assert "flit_seq=0x9" in capsys.readouterr().out
