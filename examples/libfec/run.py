"""Build the libfec harness and difftest it against the model (examples/libfec/README.md).

``python examples/libfec/run.py`` compiles ``fec_harness.c`` against Debian's
libfec into a temporary directory (or ``--build DIR``), runs difftest on the
four PHY codecs (``phy-kp4-encode``, ``phy-kp4-decode``, ``phy-ll-encode``,
``phy-ll-decode``) and then a probe of the shortened-code miscorrection class
(words within t of a full-length codeword that has a non-zero pad symbol).
Exit status 0 when libfec and the model agree everywhere, 1 otherwise, 2 when
gcc or libfec-dev is missing (one line saying what to install).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ualink_ref.phy import KP4, LL, gf
from ualink_ref.phy.flits import encode_flits
from ualink_ref.phy.reedsolomon import ReedSolomonCode
from ualink_ref.testing.difftest import CODECS, SubprocessTarget, difftest
from ualink_ref.testing.difftest.api import Failure, Result, check_one, target_runner
from ualink_ref.testing.difftest.layers import Case

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "fec_harness.c"
#: The codecs the harness speaks (specs/difftest.md "Codecs").
HARNESS_CODECS = ("phy-kp4-encode", "phy-kp4-decode", "phy-ll-encode", "phy-ll-decode")
#: The documented build line, without the output name (README "Build").
CFLAGS = ("-O2", "-Wall", "-Wextra", "-Werror", "-std=c99")
_PROBE_C = ("#include <fec.h>\nint main(void) {\n"
            "    void *rs = init_rs_int(10, 0x409, 0, 1, 30, 479);\n"
            "    if (rs) free_rs_int(rs);\n    return rs == 0;\n}\n")


class BuildError(RuntimeError):
    """The harness did not compile (the compiler's message is the text)."""


def missing_tools() -> str | None:
    """Why the harness cannot be built here, or ``None`` when gcc and libfec-dev are present."""
    if shutil.which("gcc") is None:
        return "gcc not installed (apt-get install gcc)"
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.c"
        probe.write_text(_PROBE_C)
        done = subprocess.run(["gcc", str(probe), "-o", str(Path(tmp) / "probe"), "-lfec"],
                              capture_output=True, text=True, check=False)
    if done.returncode:
        return "libfec-dev not installed (apt-get install libfec-dev)"
    return None


def build(out_dir: Path, *, seeded_bug: bool = False) -> Path:
    """Compile the harness into ``out_dir``; ``seeded_bug`` builds the variant that
    ignores libfec's "uncorrectable" return (to show a disagreement is caught)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = out_dir / ("fec_harness_seeded_bug" if seeded_bug else "fec_harness")
    argv = ["gcc", *CFLAGS, *(["-DSEEDED_BUG"] if seeded_bug else []),
            "-o", str(exe), str(SOURCE), "-lfec"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode:
        raise BuildError(done.stderr.strip() or f"gcc exited with status {done.returncode}")
    return exe


@dataclass
class Tally:
    """A line target that passes requests on and counts the kinds of response it saw.

    Kinds: ``rejected`` (``ERR``), ``encoded`` (hex), and for decoders
    ``clean`` (nothing corrected), ``corrected``, ``flagged`` (uncorrectable).
    """

    inner: SubprocessTarget
    counts: Counter[str] = field(default_factory=Counter)

    def exchange(self, line: str) -> str:
        """Send one request line, count the response, return it."""
        response = self.inner.exchange(line)
        self.counts[_kind(response)] += 1
        return response


def _kind(response: str) -> str:
    if response.startswith("ERR"):
        return "rejected"
    if not response.startswith("{"):
        return "encoded"
    value = json.loads(response)
    if value.get("uncorrectable"):
        return "flagged"
    return "corrected" if value.get("corrected") else "clean"


def run_codec(exe: Path, codec: str, *, cases: int, seed: int) -> tuple[Result, Counter[str]]:
    """difftest ``codec`` against the harness binary ``exe``; the result and the response tally."""
    with SubprocessTarget([str(exe), codec]) as target:
        tally = Tally(target)
        result = difftest(codec, tally, seed=seed, max_cases=cases)
    return result, tally.counts


# -- the shortened-code miscorrection class ---------------------------------------------

FULL_LENGTH = gf.ORDER  # 1023 symbols: the unshortened code


def _code(mode: str) -> ReedSolomonCode:
    return KP4 if mode == "kp4" else LL


def _pad_remainders(code: ReedSolomonCode) -> np.ndarray:
    """Row j - n: the 2t coefficients (x^{2t-1} first) of x^j mod g(x), j = n .. 1022."""
    g = [int(c) for c in code.generator]  # x^{2t} first, monic
    two_t = code.n - code.k
    rows = []
    r = [0] * (two_t - 1) + [1]  # x^0
    for j in range(FULL_LENGTH):
        if j >= code.n:
            rows.append(list(r))
        top, r = r[0], [*r[1:], 0]  # multiply by x, then reduce by g
        if top:
            r = [a ^ gf.mul_scalar(top, b) for a, b in zip(r, g[1:], strict=True)]
    return np.array(rows, dtype=np.uint16)


@dataclass(frozen=True)
class PadWord:
    """One pad-region word: the wire bytes sent to both sides, and, for checking the
    construction, the corrupted codeword as sent (``sent``), as received
    (``received``) and the full-length codeword it lies within t of (``full``,
    1023 symbols, pad first)."""

    wire: bytes
    sent: np.ndarray
    received: np.ndarray
    full: np.ndarray


def pad_region_words(mode: str, count: int, seed: int) -> list[PadWord]:
    """Flits whose corrupted codeword is t+1..2t symbols from the codeword sent but
    within t of a full-length (1023-symbol) codeword with one non-zero pad symbol.
    A bounded-distance decoder of the shortened code must flag it; one that
    accepts corrections in the pad region returns a word that is not a codeword
    (issue 27).

    Construction: c' = v·x^j + (v·x^j mod g), n <= j < 1023, is a full-length
    codeword; its part inside the shortened code is the 2t parity symbols
    (weight 2t, since c' has weight >= 2t + 1). Adding those parity symbols,
    less ``r`` of them, plus ``e`` random message-symbol errors (1 + r + e <= t)
    to a clean codeword c gives such a word: it is 1 + r + e from c + c'.
    """
    code = _code(mode)
    t = (code.n - code.k) // 2
    pad = FULL_LENGTH - code.n
    rem = _pad_remainders(code)
    exp, log = gf.tables()
    rng = np.random.default_rng(seed)
    words = []
    for _ in range(count):
        wire = encode_flits(rng.integers(0, 256, 640, dtype=np.uint8).tobytes(), mode, 1)
        rows = gf.bytes_to_symbols(np.frombuffer(wire, np.uint8).reshape(-1, code.codeword_bytes),
                                   code.n).copy()
        which = int(rng.integers(0, rows.shape[0]))
        sent = rows[which].copy()
        j = code.n + int(rng.integers(0, pad))
        v = int(rng.integers(1, FULL_LENGTH + 1))
        parity = np.array([0 if c == 0 else exp[(int(log[c]) + int(log[v])) % gf.ORDER]
                           for c in rem[j - code.n]], dtype=np.uint16)
        assert np.count_nonzero(parity) == 2 * t  # minimum distance 2t + 1
        full = np.zeros(FULL_LENGTH, dtype=np.uint16)
        full[pad:] = sent
        full[FULL_LENGTH - 1 - j] ^= v  # coefficient of x^j
        full[pad + code.k:] ^= parity
        dropped = int(rng.integers(0, t))
        extra = int(rng.integers(0, t - dropped))
        parity[rng.choice(2 * t, dropped, replace=False)] = 0
        rows[which, code.k:] ^= parity
        for pos in rng.choice(code.k, extra, replace=False):
            rows[which, pos] ^= int(rng.integers(1, FULL_LENGTH + 1))
        words.append(PadWord(gf.symbols_to_bytes(rows).tobytes(), sent, rows[which].copy(), full))
    return words


@dataclass
class ProbeResult:
    """How the model and the harness answered the pad-region words of one mode."""

    mode: str
    words: int = 0
    model_flagged: int = 0
    agreed: int = 0
    first_failure: Failure | None = None

    def line(self) -> str:
        """One summary line."""
        state = "agree" if self.agreed == self.words else "DISAGREEMENT"
        return (f"pad-region probe {self.mode}: {self.words} words, model flagged "
                f"{self.model_flagged}, harness agreed on {self.agreed}: {state}")


def pad_probe(exe: Path, mode: str, *, count: int, seed: int) -> ProbeResult:
    """Ask the model and the harness about ``count`` pad-region words of ``mode``."""
    codec = CODECS[f"phy-{mode}-decode"]
    out = ProbeResult(mode)
    with SubprocessTarget([str(exe), codec.name]) as target:
        run = target_runner(codec, target)
        for word in pad_region_words(mode, count, seed):
            model, failure = check_one(codec, run, Case("pad_region", word.wire))
            out.words += 1
            out.model_flagged += bool(model.value and model.value.get("uncorrectable"))
            if failure is None:
                out.agreed += 1
            elif out.first_failure is None:
                out.first_failure = failure
    return out


def main(argv: list[str] | None = None) -> int:
    """Build, run difftest on the four codecs and the pad-region probe, print the results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=300, help="difftest cases per codec")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pad-words", type=int, default=100,
                        help="pad-region words per mode (0: skip the probe)")
    parser.add_argument("--build", type=Path, help="where to put the binary (default: temporary)")
    parser.add_argument("--seeded-bug", action="store_true",
                        help="build the variant that ignores libfec's uncorrectable return")
    args = parser.parse_args(argv)
    why = missing_tools()
    if why:
        print(f"run.py: {why}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(args.build or Path(tmp), seeded_bug=args.seeded_bug)
        ok = True
        for codec in HARNESS_CODECS:
            result, counts = run_codec(exe, codec, cases=args.cases, seed=args.seed)
            print(result.summary())
            answers = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
            print(f"  harness responses: {answers}")
            ok &= result.ok
        for mode in ("kp4", "ll") if args.pad_words else ():
            probe = pad_probe(exe, mode, count=args.pad_words, seed=args.seed)
            print(probe.line())
            if probe.first_failure:
                print("  " + probe.first_failure.describe().replace("\n", "\n  "))
            ok &= probe.first_failure is None
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
