"""Each atheris harness in fuzz/ loads, targets a decoder that accepts its seeds, and
turns arbitrary bytes into at most a DecodeError (atheris itself is not needed)."""

from __future__ import annotations

import contextlib
import importlib
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
HARNESSES = sorted(p.stem for p in FUZZ.glob("fuzz_*.py"))


@pytest.fixture(scope="module", autouse=True)
def fake_atheris() -> Iterator[None]:
    fake = types.ModuleType("atheris")
    fake.instrument_imports = contextlib.nullcontext  # type: ignore[attr-defined]
    saved = sys.modules.get("atheris")
    sys.modules["atheris"] = fake
    sys.path.insert(0, str(FUZZ))
    yield
    sys.path.remove(str(FUZZ))
    if saved is None:
        del sys.modules["atheris"]
    else:
        sys.modules["atheris"] = saved


def test_there_is_a_harness_per_decoder() -> None:
    assert {
        "fuzz_capture_file", "fuzz_capture_record", "fuzz_datalink", "fuzz_dissect",
        "fuzz_dl_flit", "fuzz_dl_message", "fuzz_phy_kp4", "fuzz_phy_ll_interleaved",
        "fuzz_tl_field", "fuzz_tl_flit",
    } <= set(HARNESSES)


@pytest.mark.parametrize("name", HARNESSES)
def test_harness(name: str) -> None:
    if "scapy" in name:
        pytest.importorskip("scapy")
    module = importlib.import_module(name)
    assert module.SEEDS, f"{name} has no seeds"
    for seed in module.SEEDS:
        module.DECODE(seed)  # the harness targets a decoder that accepts valid input
        module.TestOneInput(seed)

    @settings(max_examples=30, derandomize=True)
    @given(st.binary(max_size=800) | st.sampled_from(module.SEEDS).map(lambda s: s[:-1]))
    def run(data: bytes) -> None:
        module.TestOneInput(data)

    run()
