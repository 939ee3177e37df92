"""Every Scapy-facing module imports on its own, in a fresh interpreter.

Regression: ``import ualink_ref.scapy.roce`` (what ``ualink-ref compare``
does first) failed with a circular ImportError once ``scapy_layers``
re-exported the RoCEv2 headers, and ``compare`` then reported "Scapy is not
installed". In-process tests could not see it because another test had
already imported ``scapy_layers``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("scapy")


@pytest.mark.parametrize(
    "module",
    ["ualink_ref.scapy.roce", "ualink_ref.scapy.dl", "ualink_ref.scapy.tl",
     "ualink_ref.scapy.tlview",
     "ualink_ref.scapy_layers"],
)
def test_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    code = f"import {module}; import ualink_ref.scapy_layers as s; assert s.RETH and s.UALinkDLFlit"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_compare_runs_in_a_fresh_interpreter() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ualink_ref.cli", "compare", "--repeat", "1", "--json"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)
