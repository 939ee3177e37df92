"""The text report of ``ualink-ref vectors coverage`` (specs/coverage.md "The report")."""

from __future__ import annotations

from ualink_ref.testing.coverage.model import CoverageReport


def report_lines(report: CoverageReport, *, table: bool = True) -> list[str]:
    """The table (one line per point), the holes, the waived bins with their reasons,
    stale waivers, the figures per group and the summary line."""
    lines = report.table() if table else []
    lines.append(f"holes ({len(report.holes)}):" if report.holes else "holes: none")
    lines += [f"  {point} {bin_name}" for point, bin_name in report.holes]
    waived = [(r.point, b) for r in report.rows for b in r.waived]
    if waived:
        lines.append(f"waived ({len(waived)}):")
        lines += [f"  {p.name} {b}: {p.waivers[b]}" for p, b in waived]
    stale = [(r.point.name, b) for r in report.rows for b in r.stale_waivers]
    if stale:
        lines.append(f"waivers no longer needed ({len(stale)}): the bin is hit")
        lines += [f"  {point} {bin_name}" for point, bin_name in stale]
    for group, (bins, hit, wv) in report.by_group().items():
        lines.append(f"{group}: {hit}/{bins} hit, {wv} waived")
    lines.append(report.summary())
    return lines


__all__ = ["report_lines"]
