"""The TL section of docs/layers.md (once the README's): its example runs and prints what
the page shows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _section() -> str:
    text = (ROOT / "docs" / "layers.md").read_text()
    start = text.index("<!-- section: tl -->")
    end = text.index("<!-- section:", start + 10)
    return text[start:end]


def test_readme_tl_example_output() -> None:
    section = _section()
    code = re.search(r"```python\n(.*?)```", section, re.S)
    shown = re.search(r"prints\n\n```\n(.*?)```", section, re.S)
    assert code is not None and shown is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.group(1), "docs/layers.md-tl", "exec"), {})
    assert out.getvalue() == shown.group(1)


def test_readme_simulate_output_is_real() -> None:
    from ualink_ref.sim.config import Burst, SimConfig
    from ualink_ref.sim.link_run import simulate
    from ualink_ref.sim.workloads import random_workload

    shown = re.search(r"\$ ualink-ref simulate (.*?)\n(.*?)```", _section(), re.S)
    assert shown is not None
    assert shown.group(1) == "--ops 10000 --ber 1e-4 --burst 300:3e-6 --seed 1"
    report = simulate(random_workload(10_000, 1),
                      SimConfig(ber=1e-4, burst=Burst(300, 3e-6), seed=1))
    assert report.format() + "\n" == shown.group(2)
