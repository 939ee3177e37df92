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
