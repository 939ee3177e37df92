"""Compile the TL and DL engines with mypyc into ``ualink_ref/_native`` (the native build).

This file is run by ``setup.py`` at install time (loaded by path: the build
environment has no numpy, so the package itself is never imported there) and by
``ualink-ref native build``. It uses only the standard library until it calls
mypyc, and it writes, into the ``_native`` folder of the package it is given:

* ``tl__mypyc.<abi>.so`` — the shared library that holds every compiled module;
* ``shims/<module>.<abi>.so`` — one small loader per compiled module, kept out of
  the package folders so Python's own import never picks them up by itself;
* ``manifest.json`` — which modules were compiled, from which source (SHA-256),
  for which interpreter. :mod:`ualink_ref._native` loads the build only when
  every hash still matches the source beside it.

Nothing is written until the whole build has succeeded, so a failed build
leaves the previous one (or none) in place.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The modules compiled: the TL engine and the DL's flit codec and state machine,
#: the hot path of every operation (specs/native.md says why these). Everything
#: else stays interpreted and imports them as usual.
MODULES: tuple[str, ...] = (
    "ualink_ref.tl.upli",
    "ualink_ref.dl.segments",
    "ualink_ref.dl.verdict",
    "ualink_ref.dl.flit",
    "ualink_ref.dl.transmit",
    "ualink_ref.dl.datalink",
    "ualink_ref.tl.credits",
    "ualink_ref.tl.framing",
    "ualink_ref.tl.memory",
    "ualink_ref.tl.reassembly",
    "ualink_ref.tl.originator",
    "ualink_ref.tl.responses",
    "ualink_ref.tl.target",
    "ualink_ref.tl.completer",
    "ualink_ref.tl.transaction",
)

#: mypyc's group name: the shared library becomes ``ualink_ref._native.tl__mypyc``.
GROUP = "ualink_ref._native.tl"
MANIFEST = "manifest.json"
SHIMS = "shims"
#: Bumped when the layout of the build folder changes.
FORMAT = 2

# The type check mypyc runs needs no third-party stubs (numpy is absent from an
# isolated build environment) and none of the project's strictness settings.
_MYPY_CONFIG = (
    "[mypy]\nignore_missing_imports = True\nfollow_imports = silent\ncache_dir = {cache}\n"
)


def source_path(package_root: Path, module: str) -> Path:
    """The ``.py`` file of ``module`` under ``package_root`` (the folder holding ``ualink_ref``)."""
    return package_root.joinpath(*module.split(".")).with_suffix(".py")


def digest(path: Path) -> str:
    """SHA-256 of a file's bytes, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def dependencies(package_root: Path) -> list[str]:
    """The compiled modules and every first-party module they import, transitively.

    All of them are hashed into the manifest: mypyc compiles in what it learns of
    an imported module (a NamedTuple's field positions, say), so an edit to any of
    them, compiled or not, must retire the build.
    """
    seen: set[str] = set()
    todo = list(MODULES)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = source_path(package_root, name)
        package = package_root.joinpath(*name.split("."), "__init__.py")
        if package.is_file():
            path = package
        elif not path.is_file():
            continue  # not a module of ours (a name imported from a module, say)
        seen.add(name)
        parts = name.split(".")
        for parent in range(1, len(parts)):  # a module's packages run first
            todo.append(".".join(parts[:parent]))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                todo += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                todo.append(node.module)
                todo += [f"{node.module}.{alias.name}" for alias in node.names]
    return sorted(n for n in seen if n == "ualink_ref" or n.startswith("ualink_ref."))


def module_file(package_root: Path, module: str) -> Path:
    """The file of ``module``: its ``.py``, or its package's ``__init__.py``."""
    package = package_root.joinpath(*module.split("."), "__init__.py")
    return package if package.is_file() else source_path(package_root, module)


def abi_tag() -> str:
    """The extension suffix of this interpreter (``.cpython-311-x86_64-linux-gnu.so``)."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    return str(suffix)


def build(package_root: Path, out_root: Path | None = None, *, verbose: bool = False) -> Path:
    """Compile :data:`MODULES` from ``package_root``; install into ``out_root``'s ``_native``.

    ``package_root`` is the folder that holds the ``ualink_ref`` sources;
    ``out_root`` (default: the same) is the folder whose ``ualink_ref/_native``
    receives the build. Returns that ``_native`` folder. Raises whatever mypyc,
    setuptools or the C compiler raise when the build fails.
    """
    package_root = package_root.resolve()
    out_root = (out_root or package_root).resolve()
    sources = [source_path(package_root, name) for name in MODULES]
    with tempfile.TemporaryDirectory(prefix="ualink_ref_native_") as scratch_name:
        scratch = Path(scratch_name)
        built = _compile(package_root, sources, scratch, verbose=verbose)
        return _install(built, package_root, out_root)


def _compile(package_root: Path, sources: Sequence[Path], scratch: Path, *, verbose: bool) -> Path:
    """Run mypyc and the C compiler in ``scratch``; return the folder holding the built files."""
    # Imported here: mypyc is a build-time tool, absent from most runtime environments.
    from mypyc.build import mypycify
    from setuptools import Distribution

    config = scratch / "mypy.ini"
    config.write_text(_MYPY_CONFIG.format(cache=scratch / "mypy_cache"))
    here = Path.cwd()
    # mypy names modules from paths relative to the working folder.
    os.chdir(package_root)
    try:
        relative = [str(path.relative_to(package_root)) for path in sources]
        extensions = mypycify(
            ["--config-file", str(config), *relative],
            opt_level="3",
            debug_level="0",
            target_dir=str(scratch / "c"),
            group_name=GROUP,
            verbose=verbose,
        )
        distribution = Distribution({"name": "ualink_ref_native", "ext_modules": extensions})
        distribution.script_name = "ualink_ref_native_build"
        # Any: setuptools' typing (where it has any) does not declare build_ext's options.
        command: Any = distribution.get_command_obj("build_ext")
        command.build_lib = str(scratch / "lib")
        command.build_temp = str(scratch / "temp")
        command.inplace = False
        command.ensure_finalized()
        command.run()
    finally:
        os.chdir(here)
    return scratch / "lib"


def _install(built: Path, package_root: Path, out_root: Path) -> Path:
    """Move a finished build into ``out_root/ualink_ref/_native`` and write its manifest."""
    suffix = abi_tag()
    native = out_root / "ualink_ref" / "_native"
    staged = native / ".staging"
    shutil.rmtree(staged, ignore_errors=True)
    (staged / SHIMS).mkdir(parents=True)
    library = built.joinpath(*GROUP.split(".")[:-1], GROUP.rsplit(".", 1)[1] + "__mypyc" + suffix)
    shutil.copy2(library, staged / library.name)
    shims: dict[str, str] = {}
    for name in MODULES:
        shim = built.joinpath(*name.split(".")).with_suffix(suffix)
        target = f"{name}{suffix}"
        shutil.copy2(shim, staged / SHIMS / target)
        shims[name] = target
    manifest = {
        "format": FORMAT,
        "abi": suffix,
        "python": sys.version.split()[0],
        "library": library.name,
        "modules": {name: {"shim": shims[name]} for name in MODULES},
        # Every source the build depends on: compiled modules and what they import.
        "sources": {
            name: digest(module_file(package_root, name))
            for name in dependencies(package_root)
        },
    }
    (staged / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    clean(native)
    # The manifest last: until it is there, no process takes the new build.
    for entry in sorted(staged.iterdir(), key=lambda entry: entry.name == MANIFEST):
        entry.replace(native / entry.name)
    staged.rmdir()
    return native


def clean(native: Path) -> None:
    """Remove a build from a ``_native`` folder (its manifest first, so no half build loads)."""
    (native / MANIFEST).unlink(missing_ok=True)
    shutil.rmtree(native / SHIMS, ignore_errors=True)
    for library in native.glob("tl__mypyc*"):
        library.unlink()


def main(argv: Sequence[str] | None = None) -> int:
    """``python ualink_ref/_native/build.py [PACKAGE_ROOT]``: build in place; print the folder."""
    args = list(sys.argv[1:] if argv is None else argv)
    root = Path(args[0]) if args else Path(__file__).resolve().parents[2]
    print(build(root, verbose=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
