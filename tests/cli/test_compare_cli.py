"""The compare CLI's wiring, the spec's generated tables, and the lazy Scapy import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ualink_ref.bitfields import formats_markdown
from ualink_ref.cli import COMMAND_MODULES, build_parser
from ualink_ref.compare.headers import FORMATS, markdown_table

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "specs" / "rocev2-comparison.md"


def _block(text: str, name: str) -> str:
    start = text.index(f"<!-- generated: {name} -->\n") + len(f"<!-- generated: {name} -->\n")
    return text[start : text.index(f"<!-- end: {name} -->")]


def test_spec_tables_match_the_code() -> None:
    text = SPEC.read_text()
    assert _block(text, "header-table") == markdown_table()
    assert _block(text, "formats") == formats_markdown(FORMATS)


def test_compare_is_registered() -> None:
    assert "ualink_ref.cli.compare" in COMMAND_MODULES
    args = build_parser().parse_args(["compare", "--pmtu", "4096", "--csv"])
    assert args.pmtu == 4096 and args.csv and args.level == "wire"
    for bad in (["--pmtu", "1000"], ["--repeat", "0"], ["--csv", "--json"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["compare", *bad])


def test_core_imports_do_not_load_scapy() -> None:
    code = (
        "import sys, ualink_ref.compare, ualink_ref.compare.report, ualink_ref.cli.compare; "
        "assert not any(m == 'scapy' or m.startswith('scapy.') for m in sys.modules), "
        "'scapy imported'"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_missing_scapy_gives_a_clear_message() -> None:
    # Make `import scapy` fail in a child process, then run the command.
    code = (
        "import sys; sys.modules['scapy'] = None; "
        "from ualink_ref.cli import main; sys.exit(main(['compare']))"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=False)
    assert res.returncode == 1, res.stderr  # a failure, not a usage error
    assert "Scapy" in res.stderr and "ualink_ref[scapy]" in res.stderr
    assert "Traceback" not in res.stderr


def test_unwritable_plot_path_is_a_clear_error(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("scapy")
    pytest.importorskip("matplotlib")
    from ualink_ref.cli import main

    target = tmp_path / "no-such-dir" / "eff.png"
    with pytest.raises(SystemExit) as exc:  # checked when the arguments are parsed
        main(["compare", "--repeat", "1", "--plot", str(target)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and str(target) in err


def test_repeat_that_changes_the_answer_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("scapy")
    from ualink_ref.cli import main

    assert main(["compare", "--repeat", "8", "--csv"]) == 0
    err = " ".join(capsys.readouterr().err.split())  # the note is wrapped at 100 columns
    assert "note: --repeat 8" in err and "differ from the default (64)" in err
    assert main(["compare", "--csv"]) == 0
    assert "note" not in capsys.readouterr().err
