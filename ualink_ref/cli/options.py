"""What every ``ualink-ref`` subcommand shares: the parser class and its one error format,
argument types that validate at parse time, the run options of ``simulate`` and
``capture``, and the progress bar.

Conventions (specs/cli.md): a bad argument is a usage error, exit status 2, one
line ``ualink-ref <command>: error: <what is wrong>`` on stderr; a failure while
running is exit status 1 with a line of the same form; Ctrl-C is exit status
130 without a traceback.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from ualink_ref.errors import ConfigError
from ualink_ref.sizes import FEC_MODES

#: Exit status of a usage error (bad argument) and of a failure while running.
USAGE, FAILURE = 2, 1
#: Exit status after Ctrl-C (128 + SIGINT, the shell convention).
INTERRUPTED = 130
#: Memory the simulator keeps per op for the final data check, bytes: measured (about
#: 0.7 KB an op between 2,000 and 20,000 ops of ``simulate``), rounded up.
BYTES_PER_OP = 1024


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line: ``prog: error: message``."""

    def error(self, message: str) -> NoReturn:
        """Print the one-line usage error and exit with status 2."""
        self.exit(USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def fail(command: str, message: str, status: int = FAILURE) -> int:
    """Print the one-line error of ``command`` and return ``status`` (1 unless told)."""
    print(f"ualink-ref {command}: error: {message}", file=sys.stderr)
    return status


def usage_error(command: str, message: str) -> int:
    """Print a usage error of ``command`` found after parsing (one option against another),
    in the parser's own format, and return :data:`USAGE`."""
    print(f"ualink-ref {command}: error: {message} (see ualink-ref {command} --help)",
          file=sys.stderr)
    return USAGE


def config_usage_error(command: str, exc: ConfigError, flags: dict[str, str] | None = None,
                       ) -> int:
    """:func:`usage_error` for a configuration object's refusal (``exc``), naming the
    command-line option that set the refused field: ``flags[exc.option]``, else the field
    spelt as an option (``cable_m`` -> ``--cable-m``)."""
    flag = (flags or {}).get(exc.option, "--" + exc.option.replace("_", "-"))
    what = str(exc).removeprefix(exc.option + ": ")
    return usage_error(command, f"argument {flag}: {what}")


def int_range(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argument type: an integer in ``[minimum, maximum]``."""

    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if maximum is not None and not minimum <= value <= maximum:  # name the whole range
            raise argparse.ArgumentTypeError(f"must be {minimum}..{maximum}, got {value}")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    parse.__name__ = "integer"  # argparse names the type in some messages
    return parse


def float_range(minimum: float, maximum: float, *, above: bool = False) -> Callable[[str], float]:
    """An argument type: a finite number in ``[minimum, maximum]`` (``(minimum, ...]``
    with ``above``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        low_ok = value > minimum if above else value >= minimum
        if not math.isfinite(value) or not low_ok or value > maximum:
            sign = ">" if above else ">="
            raise argparse.ArgumentTypeError(
                f"must be {sign} {minimum:g} and <= {maximum:g}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


def choice_list(choices: Sequence[str]) -> Callable[[str], list[str]]:
    """An argument type: a comma-separated, non-empty list of names from ``choices``
    (repeats dropped, order kept)."""

    def parse(text: str) -> list[str]:
        words = [word.strip() for word in text.split(",") if word.strip()]
        if not words:
            raise argparse.ArgumentTypeError(
                f"expected a comma-separated list from {','.join(choices)}, got {text!r}")
        unknown = [word for word in words if word not in choices]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"{unknown[0]!r} is not one of {','.join(choices)}")
        return list(dict.fromkeys(words))

    parse.__name__ = "list"
    return parse


def non_empty(text: str) -> str:
    """An argument type: any text but the empty one (a name or an address)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def output_file(text: str) -> str:
    """An argument type: a file to write, in a directory that exists (checked before a run,
    so a typo does not cost the run)."""
    path = Path(text)
    if not text or path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, not a file name")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"cannot write {text}: directory {path.parent} does not exist")
    return text


def output_dir(text: str) -> str:
    """An argument type: a directory to write into (made if missing), not an existing file."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    if Path(text).exists() and not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text} exists and is not a directory")
    return text


def burst(text: str) -> tuple[int, float]:
    """``--burst LEN:RATE``: bursts of LEN >= 1 bits, starting at each bit with 0 <= RATE <= 1."""
    try:
        length_text, rate_text = text.split(":")
        length, rate = int(length_text), float(rate_text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LEN:RATE, got {text!r}") from None
    if length < 1 or not 0.0 <= rate <= 1.0:
        raise argparse.ArgumentTypeError(
            f"LEN must be >= 1 and RATE between 0 and 1, got {text!r}")
    return length, rate


def physical_memory() -> int | None:
    """Bytes of physical memory of this machine (None where the OS does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def op_count(text: str) -> int:
    """``--ops N``: at least 0, and no more than the simulator can keep in this machine's memory.

    The simulator keeps every op and its result for the final data check
    (:data:`BYTES_PER_OP` each); a count that cannot fit is refused at once
    instead of failing hours later.
    """
    value = int_range(0)(text)
    memory = physical_memory()
    if memory is not None and value * BYTES_PER_OP > memory:
        need = value * BYTES_PER_OP / 2**30
        raise argparse.ArgumentTypeError(
            f"{value} ops would need about {need:,.0f} GiB of memory (about 1 KiB per op is "
            f"kept for the data check); this machine has {memory / 2**30:,.0f} GiB: use at "
            f"most {memory // BYTES_PER_OP}")
    return value


#: The run options ``simulate`` and ``capture`` share: name -> (flag, add_argument keywords).
#: Defaults live in :data:`RUN_DEFAULTS` so a command can tell what was given (see :func:`resolve`).
RUN_OPTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "ops": ("--ops", {"type": op_count, "metavar": "N", "help": "operations from both ends"}),
    "fec": ("--fec", {"choices": FEC_MODES, "help": "FEC mode"}),
    "ber": ("--ber", {"type": float_range(0.0, 0.5), "help": "pre-FEC bit error ratio"}),
    "burst": ("--burst", {"type": burst, "metavar": "LEN:RATE",
                          "help": "error bursts of LEN bits starting at each bit with "
                                  "probability RATE"}),
    "seed": ("--seed", {"type": int_range(0, 2**32 - 1), "help": "seed of workload and channel"}),
    "span": ("--span", {"type": int_range(256, 2**40), "metavar": "BYTES",
                        "help": "address span of the workload, bytes"}),
    "latency": ("--latency", {"type": int_range(0, 1_000_000), "metavar": "SLOTS",
                              "help": "one-way wire latency, flit slots"}),
    "batch": ("--batch", {"type": int_range(1, 4096), "metavar": "SLOTS",
                          "help": "flit slots simulated per step"}),
    "max_outstanding": ("--max-outstanding", {"type": int_range(1, 1_000_000), "metavar": "N",
                                              "help": "ops in flight per side"}),
}
#: Defaults of :data:`RUN_OPTIONS` (``ops`` is the command's own).
RUN_DEFAULTS: dict[str, Any] = {
    "fec": "kp4", "ber": 0.0, "burst": None, "seed": 0, "span": 1 << 16, "latency": 8,
    "batch": 8, "max_outstanding": 64,
}


def add_run_options(parser: argparse.ArgumentParser, ops_default: int) -> None:
    """Add the shared run options (their defaults are filled in by :func:`resolve`)."""
    defaults = {**RUN_DEFAULTS, "ops": ops_default}
    for name, (flag, kw) in RUN_OPTIONS.items():
        shown = defaults[name]
        help_text = kw["help"] + ("" if shown is None else f" (default {shown})")
        parser.add_argument(flag, dest=name, default=None, **{**kw, "help": help_text})
    parser.set_defaults(ops_default=ops_default)
    add_progress_option(parser)


def add_progress_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--no-progress``: :func:`progress_bar` is given ``not args.no_progress``."""
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress on stderr (default: progress shown)")


def resolve(args: argparse.Namespace) -> set[str]:
    """Fill in the run options not given; return the names of those that were given."""
    defaults = {**RUN_DEFAULTS, "ops": args.ops_default}
    given = {name for name in RUN_OPTIONS if getattr(args, name) is not None}
    for name in RUN_OPTIONS:
        if name not in given:
            setattr(args, name, defaults[name])
    return given


class TextProgress:
    """A dependency-free progress line on a terminal (used when tqdm is not installed)."""

    def __init__(self, total: int, stream: TextIO, width: int = 30) -> None:
        self.total, self.stream, self.width = max(total, 1), stream, width
        self.done = 0
        self._shown = -1

    def update(self, count: int) -> None:
        """Advance by ``count`` ops; redraw only when the percentage changes."""
        self.done += count
        percent = 100 * self.done // self.total
        if percent != self._shown:
            self._shown = percent
            filled = self.width * self.done // self.total
            bar = "#" * filled + "." * (self.width - filled)
            self.stream.write(f"\r[{bar}] {self.done}/{self.total} ops ({percent}%)")
            self.stream.flush()

    def close(self) -> None:
        """Erase the progress line."""
        self.stream.write("\r" + " " * (self.width + 40) + "\r")
        self.stream.flush()


def progress_bar(total: int, enabled: bool) -> Any:
    """A bar counting ``total`` ops on stderr (tqdm if installed), or None when ``enabled``
    is false or stderr is not a terminal. It has ``update(n)`` and ``close()``."""
    if not enabled or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is optional: a plain text bar without it
        return TextProgress(total, sys.stderr)
    return tqdm(total=total, unit="op", file=sys.stderr, leave=False)


#: The figure formats ``--plot`` writes, by file extension.
PLOT_FORMATS = (".png", ".svg", ".pdf")


def plot_path(text: str) -> str:
    """``--plot FILE``: a .png, .svg or .pdf name in a directory that exists."""
    path = Path(text)
    if path.suffix.lower() not in PLOT_FORMATS:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the extension names the format: one of {', '.join(PLOT_FORMATS)}")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"cannot write {text}: directory {path.parent} does not exist")
    return text


__all__ = ["FAILURE", "INTERRUPTED", "PLOT_FORMATS", "RUN_DEFAULTS", "RUN_OPTIONS", "USAGE",
           "Parser", "TextProgress", "add_progress_option", "add_run_options", "burst",
           "choice_list", "config_usage_error", "fail", "float_range", "int_range", "non_empty",
           "op_count", "output_dir", "output_file", "plot_path", "progress_bar", "resolve",
           "usage_error"]
