"""Packaging metadata that a fresh machine's build depends on."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_build_requires_a_setuptools_that_understands_spdx_licence_strings() -> None:
    # Found in review: `license = "Apache-2.0"` (PEP 639) needs setuptools >= 77, but the
    # build requirement allowed 68, whose build fails ("project.license must be valid
    # exactly by one definition") wherever an older setuptools is picked.
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert isinstance(meta["project"]["license"], str)
    (req,) = [r for r in meta["build-system"]["requires"] if r.startswith("setuptools")]
    found = re.fullmatch(r"setuptools\s*>=\s*(\d+)(\.\d+)*", req)
    assert found and int(found.group(1)) >= 77, req


def test_the_build_is_pure_python(tmp_path: Path) -> None:
    # One build, no compiled step: pyproject.toml alone drives it, and the wheel runs on
    # any platform (py3-none-any).
    import shutil
    import subprocess
    import sys

    assert not (ROOT / "setup.py").exists()
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["build-system"]["requires"] == ["setuptools>=77"]
    if shutil.which("git") is None:
        return
    # Build from a clean copy of the tracked files (no stray build output carried in).
    src = tmp_path / "src"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    out = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out),
                    str(src)], check=True)
    (wheel,) = out.glob("*.whl")
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
