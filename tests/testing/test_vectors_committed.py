"""The whole committed vectors/ directory equals a fresh generation of every layer,
file for file and byte for byte, and verifies clean."""

from __future__ import annotations

from pathlib import Path

from ualink_ref.testing import vectors

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "vectors"


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_committed_vectors_equal_a_fresh_generation(tmp_path: Path) -> None:
    vectors.generate(tmp_path)
    fresh, committed = _tree(tmp_path), _tree(COMMITTED)
    assert sorted(fresh) == sorted(committed)  # no stale, no missing files
    changed = [name for name in fresh if fresh[name] != committed[name]]
    assert not changed, f"regenerate with `ualink-ref vectors generate --out vectors`: {changed}"
    assert {f"{layer}.json" for layer in vectors.LAYER_MODULES} <= set(committed)


def test_committed_vectors_verify_clean() -> None:
    report = vectors.verify_dir(COMMITTED)
    assert report.ok, [str(m) for m in report.mismatches[:5]]
    assert len(report.files) == len(vectors.LAYER_MODULES)
