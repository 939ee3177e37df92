"""Install-time hook: compile the TL and DL engines with mypyc when this machine can (optional).

Everything else about the package is declared in ``pyproject.toml``. After the
usual ``build_py``, this runs :mod:`ualink_ref._native.build` (loaded by path:
the isolated build environment has mypy but not numpy, so the package is never
imported here). The build lands in ``ualink_ref/_native/``: in the wheel, or in
the source tree for an editable install. If it fails (no C compiler, say), the
install goes on with a warning and the interpreted engines run, which are
complete and give the same results. Set ``UALINK_REF_NO_NATIVE_BUILD=1`` to
skip the build.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
SKIP_VAR = "UALINK_REF_NO_NATIVE_BUILD"


def _native_builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "_ualink_ref_native_build", HERE / "ualink_ref" / "_native" / "build.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyThenNative(build_py):
    """``build_py``, then the optional native build into the same tree."""

    def run(self) -> None:
        """Copy the sources as usual, then try the mypyc build."""
        super().run()
        builder = _native_builder()
        out_root = HERE if self.editable_mode else Path(self.build_lib)
        if not self.editable_mode:
            # pip may reuse an earlier build/lib: no build of another run goes in a wheel.
            builder.clean(out_root / "ualink_ref" / "_native")
        if os.environ.get(SKIP_VAR, "") not in ("", "0"):
            print(f"ualink_ref: native build skipped ({SKIP_VAR} is set)", file=sys.stderr)
            return
        try:
            native = builder.build(HERE, out_root)
        # Any failure leaves the complete interpreted engines; mypyc reports a type
        # error with sys.exit, so SystemExit is one too.
        except (Exception, SystemExit) as exc:
            print(
                f"ualink_ref: warning: the native build failed ({exc!r}); "
                "the interpreted engines will run (same results, slower)",
                file=sys.stderr,
            )
        else:
            print(f"ualink_ref: native TL and DL engines built in {native}", file=sys.stderr)


class PlatformDistribution(Distribution):
    """Tags the wheel for this platform: it may carry compiled modules."""

    def has_ext_modules(self) -> bool:
        """Always: the native build is added by ``build_py``, outside ``ext_modules``."""
        return True


setup(cmdclass={"build_py": BuildPyThenNative}, distclass=PlatformDistribution)
