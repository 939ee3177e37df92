"""The optional native build (mypyc) of the TL engine: built, loaded whole, current, identical.

Most tests here build a private copy of the package (about 20 s, once per run),
so they hold whatever state the installed package's own build is in. Each
runs the copy in a subprocess; ``PYTHONPATH`` puts the copy first, and every
test checks that the copy is what ran.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ualink_ref import _native
from ualink_ref._native import build
from ualink_ref.errors import UALinkError

ROOT = Path(__file__).resolve().parent.parent
PROBE = ROOT / "tests" / "native_probe.py"

_REPORT = f"""
import json, ualink_ref.tl
from ualink_ref import _native
import importlib
status = _native.status()
files = {{n: importlib.import_module(n).__spec__.origin for n in {build.MODULES!r}}}
print(json.dumps({{"active": status.active, "reason": status.reason, "files": files,
                  "package": ualink_ref.__file__}}))
"""


def _env(root: Path, *, native: bool = True) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop(_native.ENV_VAR, None)
    if not native:
        env[_native.ENV_VAR] = "1"
    return env


#: Runs ``ualink-ref`` after printing, on stderr, which build this process runs.
_CLI = ("import sys; from ualink_ref import _native; "
        "print('native:', _native.status().active, file=sys.stderr); "
        "from ualink_ref.cli import main; sys.exit(main(sys.argv[1:]))")
#: Runs pytest the same way (it prints to stdout, after the build line).
_PYTEST = ("import sys, pytest; from ualink_ref import _native; "
           "print('native:', _native.status().active); sys.exit(pytest.main(sys.argv[1:]))")


def _process(root: Path, args: list[str], *, native: bool = True,
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], env=_env(root, native=native), cwd=root,
                          capture_output=True, text=True, timeout=900)


def _run(root: Path, args: list[str], *, native: bool = True) -> str:
    result = _process(root, args, native=native)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result.stdout


def _report(root: Path, *, native: bool = True) -> dict[str, object]:
    report: dict[str, object] = json.loads(_run(root, ["-c", _REPORT], native=native))
    assert str(report["package"]).startswith(str(root))  # the copy ran, not the install
    return report


@pytest.fixture(scope="module")
def built_copy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of the package's sources with a fresh native build in it."""
    if importlib.util.find_spec("mypyc") is None:
        pytest.skip("mypy (which brings mypyc) is not installed; the test extra has it")
    root = tmp_path_factory.mktemp("native")
    shutil.copytree(ROOT / "ualink_ref", root / "ualink_ref", ignore=shutil.ignore_patterns(
        "__pycache__", "*.so", "shims", "manifest.json", ".staging"))
    build.build(root)
    yield root


def test_the_build_is_loaded_whole_from_its_own_folder(built_copy: Path) -> None:
    report = _report(built_copy)
    assert report["active"] is True, report["reason"]
    native = built_copy / "ualink_ref" / "_native"
    files = report["files"]
    assert isinstance(files, dict) and set(files) == set(build.MODULES)
    # Each module's origin is its shim, or (imported from inside the compiled group,
    # which mypyc does itself) a name mypyc makes up beside the shared library.
    assert all(Path(f).is_relative_to(native) and f.endswith(".so")
               for f in files.values()), files
    # Nothing compiled sits beside the sources, where Python's own import would find it.
    assert not list((built_copy / "ualink_ref" / "tl").glob("*.so"))


def test_the_environment_variable_runs_the_interpreted_engine(built_copy: Path) -> None:
    report = _report(built_copy, native=False)
    assert report["active"] is False and _native.ENV_VAR in str(report["reason"])
    files = report["files"]
    assert isinstance(files, dict)
    assert all(f.endswith(".py") and "_native" not in f for f in files.values())


# A compiled module; a module the build only imports (tl/codec.py is not compiled, but
# the compiled modules are built on what it declares, its NamedTuples' field positions).
@pytest.mark.parametrize("module", ["credits", "codec"])
def test_an_edited_source_runs_interpreted_until_rebuilt(built_copy: Path, module: str) -> None:
    source = built_copy / "ualink_ref" / "tl" / f"{module}.py"
    original = source.read_bytes()
    try:
        source.write_bytes(original + b"\n# edited\n")
        report = _report(built_copy)
        assert report["active"] is False
        assert f"stale: ualink_ref.tl.{module} " in str(report["reason"])
        files = report["files"]
        assert isinstance(files, dict) and all(f.endswith(".py") for f in files.values())
    finally:
        source.write_bytes(original)
    assert _report(built_copy)["active"] is True


@pytest.mark.parametrize("part", ["shims/ualink_ref.tl.memory.*", "tl__mypyc*"])
def test_a_build_missing_a_part_is_not_loaded(built_copy: Path, part: str) -> None:
    # A module's shim, or the shared library itself.
    (path,) = (built_copy / "ualink_ref" / "_native").glob(part)
    aside = path.with_name("aside")
    path.rename(aside)
    try:
        report = _report(built_copy)
        assert report["active"] is False and "incomplete" in str(report["reason"])
    finally:
        aside.rename(path)
    assert _report(built_copy)["active"] is True


def test_both_engines_give_identical_simulations(built_copy: Path) -> None:
    # Runs that cover the TL's paths: errors and replay, split responses, timeouts
    # and a fault plan, atomics, byte enables, both FEC modes. Same bytes out.
    runs = [
        ["--ops", "3000", "--ber", "1e-4", "--burst", "40:2e-6", "--split", "random",
         "--seed", "5"],
        ["--ops", "2000", "--fec", "ll", "--ber", "2e-4", "--span", "5000", "--seed", "9",
         "--timeout", "400", "--faults", "corrupt ab 12; drop-ack ba 300; stop-tag 5"],
    ]
    for args in runs:
        cli = ["-c", _CLI, "simulate", "--no-progress", "--json", *args]
        native = _process(built_copy, cli)
        interpreted = _process(built_copy, cli, native=False)
        # Each ran the build it was meant to (else the comparison would prove nothing).
        assert native.stderr.startswith("native: True"), native.stderr
        assert interpreted.stderr.startswith("native: False"), interpreted.stderr
        assert (native.returncode, native.stdout) == (interpreted.returncode,
                                                      interpreted.stdout), native.stderr
        report = json.loads(native.stdout)
        assert report["ops_completed"] == report["ops"] > 0
    assert report["timeouts"] > 0  # the second run's fault plan did bite


#: Probe lines of decoders given bytes off the wire: only ``UALinkError`` s, in both builds.
DECODER_ARGUMENTS = ("tl.receive arg0=", "TLDeframer.feed_half arg0=", "dl.receive arg0=",
                     "DLFlit.decode arg0=")


def _ualink_error_names() -> set[str]:
    names, todo = set(), [UALinkError]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return names


def test_both_engines_agree_on_hostile_arguments(built_copy: Path) -> None:
    # Same outcome for every (entry point, argument, value), except that the native
    # build may refuse a value of the wrong type with TypeError (its entry check).
    # It never takes what the interpreted engine refuses, nor raises another error,
    # and no decoder raises anything but a UALinkError in either build.
    native = _run(built_copy, [str(PROBE)]).splitlines()
    interpreted = _run(built_copy, [str(PROBE)], native=False).splitlines()
    assert native[0] == "# native: True" and interpreted[0] == "# native: False"
    assert native[1] == interpreted[1]
    assert len(native) == len(interpreted) > 1500
    ualink_errors = _ualink_error_names()
    differ, decoder_lines = [], 0
    for ours, theirs in zip(native[2:], interpreted[2:], strict=True):
        name, _, outcome = ours.rpartition(": ")
        other_name, _, other = theirs.rpartition(": ")
        assert name == other_name
        if "baseline" in name:
            assert outcome == other == "ok", name
        if name.startswith(DECODER_ARGUMENTS):
            decoder_lines += 1
            assert {outcome, other} <= ualink_errors | {"ok"}, (name, outcome, other)
        if outcome != other:
            differ.append(f"{name}: native {outcome}, interpreted {other}")
    values = int(native[1].removeprefix("# values: "))
    assert decoder_lines == len(DECODER_ARGUMENTS) * values
    assert all(": native TypeError," in line for line in differ), differ
    assert differ  # the native entry check does refuse wrong types (else this test is moot)


def test_the_tl_dl_and_stack_suites_pass_in_the_other_mode(built_copy: Path) -> None:
    # This process runs one build (native when the install is built and current);
    # the TL, DL and stack tests also run under the other, on the built copy.
    native_here = _native.status().active
    args = ["-c", _PYTEST, "-q", "-x", "-p", "no:cacheprovider", "--rootdir", str(ROOT),
            "-c", str(ROOT / "pyproject.toml"), str(ROOT / "tests" / "tl"),
            str(ROOT / "tests" / "dl"), str(ROOT / "tests" / "stack"),
            str(ROOT / "tests" / "testing" / "test_any_input.py")]
    out = _run(built_copy, args, native=not native_here)
    assert out.startswith(f"native: {not native_here}"), out[:200]
    assert " passed" in out and " failed" not in out


def test_status_reasons_for_broken_manifests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             ) -> None:
    import ualink_ref.tl.credits  # noqa: F401  (interpreted or not, it is imported now)

    # _check reads the manifest beside it: point it at a scratch folder.
    package = tmp_path / "ualink_ref"
    here = package / "_native"
    (here / "shims").mkdir(parents=True)
    source = package / "tl" / "credits.py"
    source.parent.mkdir()
    source.write_text("x = 1\n")
    monkeypatch.setattr(_native, "_HERE", here)
    monkeypatch.setattr(_native, "_PACKAGE_ROOT", tmp_path)
    monkeypatch.delenv(_native.ENV_VAR, raising=False)
    manifest = here / "manifest.json"
    suffix = build.abi_tag()
    good = {"format": build.FORMAT, "abi": suffix, "library": f"tl__mypyc{suffix}",
            "modules": {"ualink_ref.tl.credits": {"shim": f"ualink_ref.tl.credits{suffix}"}},
            "sources": {"ualink_ref.tl.credits": build.digest(source)}}

    def reason(content: object) -> str:
        manifest.write_text(content if isinstance(content, str) else json.dumps(content))
        status, shims = _native._check()
        assert not status.active and not shims
        return status.reason

    assert "not built" in _native._check()[0].reason
    assert "unreadable" in reason("{not json")
    assert "malformed" in reason({"format": build.FORMAT})
    assert "malformed" in reason([1, 2])
    assert "another version" in reason({**good, "format": build.FORMAT + 1})
    assert "another interpreter" in reason({**good, "abi": ".cpython-27-mips.so"})
    assert "incomplete" in reason(good)  # no library file yet
    (here / f"tl__mypyc{suffix}").write_bytes(b"")
    assert "incomplete" in reason(good)  # no shim file yet
    (here / "shims" / f"ualink_ref.tl.credits{suffix}").write_bytes(b"")
    manifest.write_text(json.dumps(good))
    status, unused = _native._check()
    assert not unused
    # credits.py of the real package is already imported in this process: all or none.
    assert not status.active and "already imported" in status.reason
    monkeypatch.setenv(_native.ENV_VAR, "1")
    assert "turned off" in _native._check()[0].reason
    monkeypatch.setenv(_native.ENV_VAR, "0")
    assert "already imported" in _native._check()[0].reason
    source.write_text("x = 2\n")
    assert "stale" in _native._check()[0].reason
    source.unlink()
    assert "missing" in _native._check()[0].reason
