"""``fabric``, ``sweep`` and ``collective``: every option's bad value is one usage line
naming the option (exit 2, specs/cli.md rules 1-3), and every option's help names its
default and its range (rule 1).

The tables below must hold a bad value for *every* option of each command: a test
compares them with the parser, so a new option without a bad-value case fails.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from ualink_ref.cli import main

#: option -> bad arguments (each a list of words after the command); ``{file}`` is an
#: existing regular file, ``{missing}`` a path in a directory that does not exist.
FABRIC_BAD: dict[str, list[list[str]]] = {
    "--accelerators": [["--accelerators", "2000"], ["--accelerators", "1"],
                       ["--accelerators", "x"]],
    "--pattern": [["--pattern", "foo"]],
    "--load": [["--load", "0"], ["--load", "-1"], ["--load", "5"], ["--load", "nan"]],
    "--flow-control": [["--flow-control", "foo"]],
    "--ops": [["--ops", "-1"], ["--ops", "many"], ["--ops", "1000000000000"]],
    "--size": [["--size", "2"], ["--size", "302"], ["--size", "2000000"]],
    "--mix": [["--mix", "foo"], ["--mix", "reads"]],  # the second: --mix needs --size
    "--target": [["--target", "99"], ["--target", "-1"], ["--target", "4", "--accelerators", "4"]],
    "--seed": [["--seed", "-1"], ["--seed", str(2**32)]],
    "--planes": [["--planes", "0"], ["--planes", "17"]],
    "--lanes": [["--lanes", "3"]],
    "--fec": [["--fec", "foo"]],
    "--ber": [["--ber", "0.6"], ["--ber", "-1"], ["--ber", "inf"]],
    "--cable-m": [["--cable-m", "-3"], ["--cable-m", "1e9"]],
    "--switch-ns": [["--switch-ns", "-1"], ["--switch-ns", "1e12"]],
    "--batch": [["--batch", "0"], ["--batch", "5000"]],
    "--max-outstanding": [["--max-outstanding", "0"]],
    "--capture": [["--capture", "{missing}"], ["--capture", "{dir}"]],
    "--link-down": [["--link-down", "0:99:5"], ["--link-down", "0:1"], ["--link-down", "0:1:5:2"]],
    "--zero-load": [["--zero-load=yes"]],
    "--json": [["--json=yes"]],
    "--no-progress": [["--no-progress=yes"]],
}
SWEEP_BAD: dict[str, list[list[str]]] = {
    "--patterns": [["--patterns", "foo"], ["--patterns", "uniform,foo"], ["--patterns", ","],
                   ["--collective", "broadcast", "--patterns", "uniform"]],  # not applying
    "--loads": [["--loads", "0"], ["--loads", "0.5,9"], ["--loads", "x"],
                ["--collective", "broadcast", "--loads", "0.5"]],
    "--flow-controls": [["--flow-controls", "foo"], ["--flow-controls", "cbfc,xon"]],
    "--accelerators": [["--accelerators", "1"], ["--accelerators", "16,2000"]],
    "--seeds": [["--seeds", "-1"]],
    "--ops": [["--ops", "-1"]],
    "--size": [["--size", "3"], ["--collective", "broadcast", "--size", "256"]],
    "--planes": [["--planes", "0"]],
    "--lanes": [["--lanes", "8"]],
    "--fec": [["--fec", "foo"]],
    "--ber": [["--ber", "1"]],
    "--cable-m": [["--cable-m", "-3"]],
    "--switch-ns": [["--switch-ns", "-5"]],
    "--batch": [["--batch", "0"]],
    "--max-outstanding": [["--max-outstanding", "0"]],
    "--collective": [["--collective", "foo"]],
    "--algos": [["--algos", "foo"], ["--algos", "ring"],  # the second: needs --collective
                ["--collective", "broadcast", "--algos", "one-shot", "--sizes", "4K"]],
    "--sizes": [["--sizes", "0"], ["--sizes", "4Q"], ["--sizes", "4K"]],  # 3rd: no --collective
    "--workers": [["--workers", "0"], ["--workers", "5000"]],
    "--scheduler": [["--scheduler", ""]],
    "--fidelity": [["--fidelity", "foo"], ["--fidelity", "fast"]],  # the 2nd: no --collective
    "--out": [["--out", "{file}"], ["--out", ""], ["--out", "/proc/ualink-sweep-out"],
              ["--out", "{file}/sub"]],
    "--no-progress": [["--no-progress=yes"]],
}
COLLECTIVE_BAD: dict[str, list[list[str]]] = {
    "--op": [["--op", "foo"]],
    "--algo": [["--algo", "foo"]],
    "--accelerators": [["--accelerators", "1"]],
    "--size": [["--size", "0"], ["--size", "x"]],
    "--sweep": [["--sweep", "1:0"]],
    "--dtype": [["--dtype", "x"]],
    "--planes": [["--planes", "0"]],
    "--lanes": [["--lanes", "3"]],
    "--flow-control": [["--flow-control", "foo"]],
    "--fec": [["--fec", "x"]],
    "--ber": [["--ber", "2"]],
    "--max-outstanding": [["--max-outstanding", "0"]],
    "--reduce-rate": [["--reduce-rate", "0"]],
    "--seed": [["--seed", "-1"]],
    "--link-down": [["--link-down", "9:0:0"], ["--link-down", "x"]],
    "--plot": [["--plot", "x.txt"]],
    "--fidelity": [["--fidelity", "slow"]],
    "--json": [["--json=yes"]],
    "--no-progress": [["--no-progress=yes"]],
}
TABLES = {"fabric": FABRIC_BAD, "sweep": SWEEP_BAD, "collective": COLLECTIVE_BAD}


@dataclass(frozen=True)
class Option:
    """One option as ``--help`` shows it."""

    takes_value: bool  # a metavar or a choice set follows the flag
    choices: bool  # the value is one of a printed {a,b,c} set
    help: str  # its help text, the wrapped lines joined


def _options(command: str) -> dict[str, Option]:
    """Every option of ``command`` (its long flag) but --help, read from its ``--help``
    (the user's view), printed 1,000 columns wide so that no help text is wrapped (textwrap
    would break ``all-to-all`` at its hyphen)."""
    shown = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "1000")
        with contextlib.redirect_stdout(shown), pytest.raises(SystemExit):
            main([command, "--help"])
    entries: list[tuple[list[str], list[str]]] = []
    lines = shown.getvalue().splitlines()
    for line in lines[lines.index("options:") + 1:]:
        if line.startswith("  -"):  # an option: its flags and metavar, then its help
            invocation, _, text = line.strip().partition("  ")
            entries.append((invocation.replace(",", "").split(), [text.strip()]))
        elif line.startswith("   ") and entries:  # its help, continued
            entries[-1][1].append(line.strip())
    options = {}
    for words, text in entries:
        flags = [w for w in words if w.startswith("-")]
        values = [w for w in words if not w.startswith("-")]
        if "--help" not in flags:
            options[flags[-1]] = Option(bool(values), any(v.startswith("{") for v in values),
                                        " ".join(t for t in text if t))
    return options


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own usage errors exit at parse time
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def _cases() -> list[tuple[str, str, list[str]]]:
    return [(command, option, words) for command, table in TABLES.items()
            for option, bad in table.items() for words in bad]


@pytest.mark.parametrize("command", sorted(TABLES))
def test_every_option_has_a_bad_value_case(command: str) -> None:
    assert set(TABLES[command]) == set(_options(command))


@pytest.mark.parametrize(("command", "option", "words"), _cases(),
                         ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_bad_value_is_one_usage_line_naming_the_option(
        command: str, option: str, words: list[str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    existing = tmp_path / "file.txt"
    existing.write_text("x")
    args = [w.format(file=existing, dir=tmp_path, missing=tmp_path / "no" / "x.pcap")
            for w in words]
    code, out, err = _run([command, *args, "--out", str(tmp_path / "out")]
                          if command == "sweep" and option != "--out" else [command, *args],
                          capsys)
    lines = err.splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1, err
    assert lines[0].startswith(f"ualink-ref {command}: error: "), err
    assert option in lines[0], err
    assert "internal error" not in err and "Traceback" not in err
    assert out == ""
    assert not (tmp_path / "out").exists()  # refused before anything ran


#: Words that name a range or a set of valid values in a help text.
RANGE_MARKS = ("..", ">=", "(0,", "from ", "one of", "multiple of", "directory", "address",
               "0..N-1", ".png")


@pytest.mark.parametrize("command", sorted(TABLES))
def test_help_names_every_default_and_range(command: str) -> None:
    options = _options(command)
    assert "--accelerators" in options and "--no-progress" in options  # the parse found them
    for flag, option in options.items():
        text = option.help
        assert "default" in text, (flag, text)
        if option.takes_value and not option.choices:
            assert any(mark in text for mark in RANGE_MARKS), (flag, text)


def test_help_names_the_range_of_the_issue_options() -> None:
    opts = _options("fabric")
    assert "2..1024" in opts["--accelerators"].help
    assert "(0, 4]" in opts["--load"].help
    assert "0..100000" in opts["--cable-m"].help
    assert "4..1048576" in opts["--size"].help
    assert "0..N-1" in opts["--target"].help
    assert opts["--pattern"].choices and not opts["--json"].takes_value
    sweep = _options("sweep")
    assert "uniform,permutation,all-to-all,incast,hotspot" in sweep["--patterns"].help
    assert "'plot' extra" in sweep["--out"].help


def test_the_issue_messages(capsys: pytest.CaptureFixture[str]) -> None:
    """The exact lines a user sees for the values the issue lists (copied into the report)."""
    want = {
        ("fabric", "--load", "0"): "argument --load: must be > 0 and <= 4, got 0",
        ("fabric", "--accelerators", "2000"): "argument --accelerators: must be 2..1024, got 2000",
        ("fabric", "--size", "302"): "argument --size: must be a multiple of 4, got 302",
        ("fabric", "--target", "99"): "argument --target: must be an accelerator ID 0..15 "
                                      "(--accelerators 16), got 99",
        ("fabric", "--cable-m", "-3"): "argument --cable-m: must be >= 0 and <= 100000, got -3",
        ("sweep", "--patterns", "foo"): "argument --patterns: 'foo' is not one of "
                                        "uniform,permutation,all-to-all,incast,hotspot",
    }
    for (command, flag, value), message in want.items():
        code, _, err = _run([command, flag, value], capsys)
        assert code == 2
        assert err == (f"ualink-ref {command}: error: {message} "
                       f"(see ualink-ref {command} --help)\n")


def test_fabric_size_300_is_valid(capsys: pytest.CaptureFixture[str]) -> None:
    """300 bytes is a multiple of 4 within 4..1 MiB (rule W5): a two-op transfer, not an error."""
    code, out, err = _run(["fabric", "--size", "300", "--ops", "4", "--accelerators", "2",
                           "--no-progress"], capsys)
    assert code == 0, err
    assert "8/8 completed" in out
