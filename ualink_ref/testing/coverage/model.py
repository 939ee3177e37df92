"""The cover-point model: points with named bins, hit counts, waivers, a report.

Plain Python with no dependency (specs/coverage.md, "Why our own model"): a
:class:`CoverPoint` is a name, a group and a tuple of bin names; a
:class:`Coverage` counts hits per bin of the points of one
:class:`CoverageModel`. A bin that the committed vectors are known not to reach
carries a *waiver* (its reason) in the model: the report lists it under
"waived", not as an unexplained hole, and the closure figure — the one the
threshold applies to — counts it as closed. A waived bin that is hit is
reported as hit, and its waiver as no longer needed, so waivers cannot rot
silently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

#: The groups every point belongs to (specs/coverage.md, "Cover points").
GROUPS = ("rule", "field", "error", "cross")


@dataclass(frozen=True)
class CoverPoint:
    """One cover point: ``bins`` are the values it distinguishes (specs/coverage.md).

    ``waivers`` maps a bin to the reason the committed vectors do not reach it.
    """

    name: str
    group: str
    bins: tuple[str, ...]
    description: str = ""
    waivers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise ValueError(f"cover point {self.name!r}: group {self.group!r} not in {GROUPS}")
        if not self.bins or len(set(self.bins)) != len(self.bins):
            raise ValueError(f"cover point {self.name!r}: bins must be distinct and non-empty")
        unknown = set(self.waivers) - set(self.bins)
        if unknown:
            raise ValueError(f"cover point {self.name!r}: waivers for no bin {sorted(unknown)}")
        object.__setattr__(self, "waivers", MappingProxyType(dict(self.waivers)))


class CoverageModel:
    """The declared cover points, by name (immutable once built)."""

    def __init__(self, points: Iterable[CoverPoint]) -> None:
        self.points: Mapping[str, CoverPoint] = MappingProxyType(
            {p.name: p for p in points})
        self._bins = {name: frozenset(p.bins) for name, p in self.points.items()}

    def has(self, point: str, bin_name: str) -> bool:
        """True when ``point`` is declared and has ``bin_name``."""
        bins = self._bins.get(point)
        return bins is not None and bin_name in bins

    def __len__(self) -> int:
        return sum(len(p.bins) for p in self.points.values())


class Coverage:
    """Hit counts of one sampling run over a :class:`CoverageModel`.

    Samplers call :meth:`hit`; a bin the model does not declare is a sampler bug
    and raises ``KeyError`` naming it (never a silent new bin).
    """

    def __init__(self, model: CoverageModel) -> None:
        self.model = model
        self.counts: Counter[tuple[str, str]] = Counter()
        self.samples = 0  # cases (or inputs) sampled

    def hit(self, point: str, bin_name: str, count: int = 1) -> None:
        """Count ``count`` hits of ``bin_name`` of ``point``."""
        if not self.model.has(point, bin_name):
            raise KeyError(f"no cover bin {point}:{bin_name}")
        self.counts[(point, bin_name)] += count

    def hits(self, point: str, bin_name: str) -> int:
        """How often ``bin_name`` of ``point`` was hit."""
        return self.counts[(point, bin_name)]

    def merge(self, other: Coverage) -> None:
        """Add ``other``'s hits (same model) into this one."""
        self.counts.update(other.counts)
        self.samples += other.samples

    def report(self, *, select: str = "", use_waivers: bool = True) -> CoverageReport:
        """The report over the points whose name starts with ``select``."""
        rows = []
        for point in self.model.points.values():
            if not point.name.startswith(select):
                continue
            hit = tuple(b for b in point.bins if self.hits(point.name, b))
            waivers = point.waivers if use_waivers else {}
            holes = tuple(b for b in point.bins if b not in hit and b not in waivers)
            waived = tuple(b for b in point.bins if b not in hit and b in waivers)
            stale = tuple(b for b in hit if b in waivers)
            rows.append(PointReport(point, hit, holes, waived, stale))
        return CoverageReport(tuple(rows), self.samples)


@dataclass(frozen=True)
class PointReport:
    """One point's outcome: bins hit, holes (unhit, no waiver), waived, stale waivers."""

    point: CoverPoint
    hit: tuple[str, ...]
    holes: tuple[str, ...]
    waived: tuple[str, ...]
    stale_waivers: tuple[str, ...]


@dataclass(frozen=True)
class CoverageReport:
    """The table, the holes and the two figures of specs/coverage.md "The report"."""

    rows: tuple[PointReport, ...]
    samples: int

    @property
    def bins(self) -> int:
        """Bins declared in the selected points."""
        return sum(len(r.point.bins) for r in self.rows)

    @property
    def hit(self) -> int:
        """Bins hit at least once."""
        return sum(len(r.hit) for r in self.rows)

    @property
    def waived(self) -> int:
        """Bins not hit that carry a waiver."""
        return sum(len(r.waived) for r in self.rows)

    @property
    def holes(self) -> tuple[tuple[str, str], ...]:
        """``(point, bin)`` of every bin neither hit nor waived."""
        return tuple((r.point.name, b) for r in self.rows for b in r.holes)

    @property
    def hit_percent(self) -> float:
        """Bins hit over all bins, in percent (the raw figure)."""
        return 100.0 * self.hit / self.bins if self.bins else 100.0

    @property
    def closure_percent(self) -> float:
        """Bins hit or waived over all bins, in percent (the threshold's figure)."""
        return 100.0 * (self.hit + self.waived) / self.bins if self.bins else 100.0

    def by_group(self) -> dict[str, tuple[int, int, int]]:
        """Group -> (bins, hit, waived)."""
        out: dict[str, tuple[int, int, int]] = {}
        for r in self.rows:
            b, h, w = out.get(r.point.group, (0, 0, 0))
            out[r.point.group] = (b + len(r.point.bins), h + len(r.hit), w + len(r.waived))
        return out

    def table(self) -> list[str]:
        """One line per point: hit / bins, waived, holes (the CLI's table)."""
        width = max((len(r.point.name) for r in self.rows), default=10)
        lines = [f"{'point':<{width}}  hit/bins  waived  holes"]
        for r in self.rows:
            bins = len(r.point.bins)
            lines.append(f"{r.point.name:<{width}}  {len(r.hit):>4}/{bins:<4}  "
                         f"{len(r.waived):>6}  {len(r.holes):>5}")
        return lines

    def summary(self) -> str:
        """The figures in one line."""
        return (f"{self.hit} of {self.bins} bins hit ({self.hit_percent:.1f} %), "
                f"{self.waived} waived, {len(self.holes)} hole(s): closure "
                f"{self.closure_percent:.1f} % over {self.samples} sample(s)")


__all__ = [
    "GROUPS",
    "CoverPoint",
    "Coverage",
    "CoverageModel",
    "CoverageReport",
    "PointReport",
]
