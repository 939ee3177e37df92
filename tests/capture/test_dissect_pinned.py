"""`ualink-ref dissect` prints exactly what it printed before the issue-12 speed-up.

``data/dissect_pinned.pcap`` and the three expected outputs (default listing with
summary, ``-v``, ``--json``) were written by the dissector as it was before the
typed-codec TL walk and the lazy views (main at 69167b6; how:
``data/make_dissect_pinned.py``). They are a frozen copy, apart from the vectors, so
regenerating ``vectors/`` never changes them. Change them only for an intended
change of the output, and say so in the commit.

Changed once since, on purpose (issue 13, the TL error paths in words): responses
with ``offset`` != 0 or ``last`` = 0 gained "beats A-B of a split, ...", and the
summary gained the "split responses" line. Removing exactly those words from the
new outputs gave the old ones byte for byte (checked when they were rewritten).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from ualink_ref.cli import main

DATA = Path(__file__).resolve().parent / "data"
CAPTURE = DATA / "dissect_pinned.pcap"


@pytest.mark.parametrize(("args", "expected"), [
    ([], "dissect_pinned.txt.gz"),
    (["-v"], "dissect_pinned.verbose.txt.gz"),
    (["--json"], "dissect_pinned.jsonl.gz"),
], ids=["listing", "verbose", "json"])
def test_output_is_byte_identical_to_before(args: list[str], expected: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["dissect", *args, str(CAPTURE)]) == 0
    got = capsys.readouterr().out.splitlines()
    want = gzip.decompress((DATA / expected).read_bytes()).decode().splitlines()
    # line by line first, so a failure names the first line that differs
    for n, (g, w) in enumerate(zip(got, want, strict=False)):
        assert g == w, f"line {n + 1} of {expected}"
    assert len(got) == len(want)


def test_the_pinned_capture_exercises_the_tl_paths(capsys: pytest.CaptureFixture[str]) -> None:
    """The capture covers what the TL walk decides: undecodable TL flits, unknown ways,
    credits, atomics, gaps and duplicates (so the comparison above means something)."""
    text = gzip.decompress((DATA / "dissect_pinned.verbose.txt.gz").read_bytes()).decode()
    for needle in ("TL flit not decodable", "unknown)", "credits ", "AtomicR", "[gap",
                   "duplicate", "synchronised", "data "):
        assert needle in text, needle
