"""Load the optional native (mypyc-compiled) TL and DL engines, when built and current.

``pip install`` compiles the engines' hot modules with mypyc when it can (see
``setup.py`` and :mod:`ualink_ref._native.build`); ``ualink-ref native build``
does it later. The build lives in this folder, never beside the sources, so
Python's own import cannot pick it up by itself: importing this module (which
:mod:`ualink_ref.tl` and :mod:`ualink_ref.dl` do before anything else) runs
:func:`activate`, which puts a finder in front of the import system that serves
the compiled modules, all of them or none, and only

* when the environment variable ``UALINK_REF_NO_NATIVE`` is unset, empty or ``0``;
* when the build's manifest matches this interpreter and every source file it
  was compiled from still has the SHA-256 recorded at build time (an edited
  source runs interpreted until it is rebuilt, never stale).

The interpreted modules are the reference; the compiled ones are the same code,
so every result is identical. :func:`status` says which runs and why.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

#: Set to a non-empty value other than "0" to run the interpreted engines.
ENV_VAR = "UALINK_REF_NO_NATIVE"
_HERE = Path(__file__).resolve().parent
_PACKAGE_ROOT = _HERE.parents[1]  # the folder that holds ``ualink_ref``
_MANIFEST_FORMAT = 2  # the layout written by ualink_ref._native.build (FORMAT there)
_LIBRARY = "tl__mypyc"  # the shared library's module, beside this file (build.GROUP)


@dataclass(frozen=True, slots=True)
class NativeStatus:
    """Whether the compiled engines run in this process, and why (or why not)."""

    active: bool
    reason: str
    modules: tuple[str, ...] = ()


class _CompiledFinder(importlib.abc.MetaPathFinder):
    """Serves each compiled module's shim (an extension module) under the module's own name."""

    def __init__(self, shims: dict[str, Path]) -> None:
        self._shims = shims

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec loading the shim of ``fullname``, or None for every other module."""
        shim = self._shims.get(fullname)
        if shim is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(shim))
        return importlib.machinery.ModuleSpec(fullname, loader, origin=str(shim))


_state: list[NativeStatus] = []


def activate() -> NativeStatus:
    """Install the compiled modules' finder if the build is usable (once per process)."""
    if not _state:
        status, shims = _check()
        if status.active:
            try:
                # Loaded now, while the files are the ones just checked; a shim
                # imported later finds it loaded.
                importlib.import_module(f"{__name__}.{_LIBRARY}")
            except ImportError as exc:
                status, shims = NativeStatus(False, f"the build does not load: {exc}"), {}
        if status.active:
            sys.meta_path.insert(0, _CompiledFinder(shims))
        _state.append(status)
    return _state[0]


def status() -> NativeStatus:
    """What :func:`activate` decided (deciding now if nothing has imported the TL yet)."""
    return activate()


def _check() -> tuple[NativeStatus, dict[str, Path]]:
    if os.environ.get(ENV_VAR, "") not in ("", "0"):
        return NativeStatus(False, f"turned off by {ENV_VAR}"), {}
    manifest_path = _HERE / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text())
    except FileNotFoundError:
        return NativeStatus(False, "not built (`ualink-ref native build` builds it)"), {}
    except (OSError, ValueError) as exc:
        return NativeStatus(False, f"unreadable build manifest: {exc}"), {}
    try:
        if manifest["format"] != _MANIFEST_FORMAT:
            return NativeStatus(False, "built by another version of this package"), {}
        if manifest["abi"] not in importlib.machinery.EXTENSION_SUFFIXES:
            return NativeStatus(False, f"built for another interpreter ({manifest['abi']})"), {}
        for name, recorded in manifest["sources"].items():
            parts = name.split(".")
            source = _PACKAGE_ROOT.joinpath(*parts, "__init__.py")
            if not source.is_file():
                source = _PACKAGE_ROOT.joinpath(*parts).with_suffix(".py")
            try:
                current = hashlib.sha256(source.read_bytes()).hexdigest()
            except OSError:
                return NativeStatus(False, f"source of {name} is missing"), {}
            if current != recorded:
                return NativeStatus(False, f"stale: {name} changed since the build"), {}
        if not (_HERE / manifest["library"]).is_file():
            return NativeStatus(False, f"incomplete build: no {manifest['library']}"), {}
        shims: dict[str, Path] = {}
        for name, entry in manifest["modules"].items():
            shim = _HERE / "shims" / entry["shim"]
            if not shim.is_file():
                return NativeStatus(False, f"incomplete build: no {shim.name}"), {}
            shims[name] = shim
    except (KeyError, TypeError, AttributeError) as exc:
        return NativeStatus(False, f"malformed build manifest: {exc!r}"), {}
    already = sorted(name for name in shims if name in sys.modules)
    if already:
        # Compiled and interpreted modules of one build cannot mix: all or none.
        return NativeStatus(False, f"interpreted modules already imported: {already}"), {}
    return NativeStatus(True, "compiled with mypyc", tuple(shims)), shims


activate()
