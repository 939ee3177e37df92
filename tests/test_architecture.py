"""The package's shape: each package imports only what specs/README.md allows, no cycles.

The allowed imports are read from the table in specs/README.md, "Architecture"
(between its ``architecture-table`` markers), so the document and this test cannot
drift apart. The package facade ``ualink_ref/__init__.py`` is exempt: it re-exports
names lazily (PEP 562).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "ualink_ref"
SPEC = PKG.parent / "specs" / "README.md"


def _allowed() -> dict[str, set[str]]:
    """Package -> the packages it may import, from the Architecture table."""
    text = SPEC.read_text()
    table = text.split("<!-- architecture-table -->")[1].split("<!-- /architecture-table -->")[0]
    allowed: dict[str, set[str]] = {}
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        package = cells[0].strip("`")
        names = re.sub(r"\(.*?\)", "", cells[2])
        listed = {n.strip() for n in names.split(",")} - {"", "—"}
        allowed[package] = {"*"} if names == "every package" else listed
    return allowed


ALLOWED = _allowed()
#: Third-party packages that are optional extras: the only function-level imports allowed.
OPTIONAL = ("scapy", "matplotlib", "tqdm", "numba", "dask", "distributed", "cocotb", "atheris",
            "hypothesis", "cocotb_coverage")
#: Our modules that import an optional extra themselves (Scapy; Hypothesis; numba).
NEEDS_EXTRAS = ("ualink_ref.scapy", "ualink_ref.strategies", "ualink_ref.testing.strategies",
                "ualink_ref.phy._numba_kernels")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path, *, runtime_only: bool = False) -> list[tuple[str, bool]]:
    """(imported module, at module level?) for every import statement in ``path``.

    ``from package import name`` counts as importing ``package.name`` when that
    is a module (Python initialises the package either way); ``runtime_only``
    leaves out imports under ``if TYPE_CHECKING:``, which never run.
    """
    tree = ast.parse(path.read_text())
    top_level: set[ast.AST] = set()
    skipped: set[ast.AST] = set()
    for node in tree.body:
        top_level.add(node)
        if isinstance(node, ast.If) and _is_type_checking(node) and runtime_only:
            skipped.update(ast.walk(node))
        if isinstance(node, (ast.If, ast.Try)):  # TYPE_CHECKING blocks, optional fallbacks
            top_level.update(ast.walk(node))
    out = []
    module = _module_name(path)
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            out += [(alias.name, node in top_level) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = module.split(".")
                if path.name != "__init__.py":
                    base.pop()
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            submodules = [f"{target}.{a.name}" for a in node.names
                          if f"{target}.{a.name}" in _ALL_MODULES]
            if submodules and len(submodules) == len(node.names):
                out += [(m, node in top_level) for m in submodules]
            else:
                out.append((target, node in top_level))
    return out


MODULES = {_module_name(p): p for p in PKG.rglob("*.py")}
_ALL_MODULES = set(MODULES)


def _edges(*, runtime_only: bool = False) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        targets = {t for t, _ in _imports(path, runtime_only=runtime_only)
                   if t in MODULES and t != name}
        edges[name] = {t for t in targets if t != "ualink_ref"}
    return edges


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None  # None: the facade


def test_every_package_is_in_the_architecture_table() -> None:
    packages = {_package(m) for m in MODULES} - {None}
    assert packages == set(ALLOWED), (
        f"specs/README.md Architecture table: missing {sorted(packages - set(ALLOWED))}, "
        f"stale {sorted(set(ALLOWED) - packages)}")


def test_imports_are_the_ones_the_table_allows() -> None:
    bad = []
    for source, targets in _edges().items():
        src = _package(source)
        if src is None or "*" in ALLOWED[src]:
            continue
        for target in targets:
            dst = _package(target)
            if dst is not None and dst != src and dst not in ALLOWED[src]:
                bad.append(f"{source} -> {target}")
    assert not bad, "imports specs/README.md does not allow:\n" + "\n".join(sorted(bad))


def test_no_import_cycles() -> None:
    edges = _edges(runtime_only=True)
    # packages import their own submodules (re-exports); a submodule importing
    # its package's __init__ back would be a cycle, so keep every edge.
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_function_level_imports_only_for_optional_dependencies() -> None:
    bad = []
    for name, path in MODULES.items():
        if name == "ualink_ref":
            continue
        for target, at_top in _imports(path):
            if at_top or target.split(".")[0] in OPTIONAL or target.startswith(NEEDS_EXTRAS):
                continue  # optional extras (these modules import Scapy or Hypothesis)
            if target.startswith("ualink_ref") or target.split(".")[0] == "numpy":
                bad.append(f"{name}: {target}")
    assert not bad, "function-level imports of required modules:\n" + "\n".join(sorted(set(bad)))


@pytest.mark.parametrize("argv", [["--help"], ["simulate", "--help"], ["dissect", "--help"]])
def test_cli_help_does_not_import_numpy(argv: list[str]) -> None:
    code = (
        "import sys; from ualink_ref.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "sys.stdout.flush(); print('NUMPY' if 'numpy' in sys.modules else 'CLEAN', file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          check=False)
    assert proc.stderr.strip().splitlines()[-1] == ("CLEAN" if argv == ["--help"] else
                                                   proc.stderr.strip().splitlines()[-1])
    if argv == ["--help"]:
        assert "simulate" in proc.stdout and "dissect" in proc.stdout


def _targets(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple | ast.List):
        return [n for item in node.elts for n in _targets(item)]
    return []


def _defined_names(path: Path) -> set[str]:
    """Names a module defines at its top level (not the ones it only imports)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        inner_nodes = list(ast.walk(node)) if isinstance(node, ast.If | ast.Try) else [node]
        for inner in inner_nodes:  # (optional fallbacks define names inside if / try)
            if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(inner.name)
            elif isinstance(inner, ast.Assign):
                names.update(n for t in inner.targets for n in _targets(t))
            elif isinstance(inner, ast.AnnAssign):
                names.update(_targets(inner.target))
    return names


def test_names_are_imported_from_the_module_that_defines_them() -> None:
    # A module re-importing a name is no import path (the issue's "no re-exports used as
    # import paths"); a package's __init__ is its public face and may gather names.
    defined = {name: _defined_names(path) for name, path in MODULES.items()
               if path.name != "__init__.py"}
    bad = []
    for source, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            if node.module not in defined:
                continue  # a package's face, a submodule import, or a third party
            for alias in node.names:
                module_attr = f"{node.module}.{alias.name}"
                if (alias.name != "*" and alias.name not in defined[node.module]
                        and module_attr not in MODULES):
                    bad.append(f"{source}: {alias.name} from {node.module}")
    assert not bad, "import these from where they are defined:\n" + "\n".join(sorted(bad))
