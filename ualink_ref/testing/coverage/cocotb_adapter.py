"""The same cover points in a cocotb testbench, through cocotb-coverage (the ``cocotb`` extra).

:func:`mirrored_coverage` returns a :class:`~ualink_ref.testing.coverage.model.Coverage`
whose every hit is also sampled into a ``cocotb_coverage.coverage.CoverPoint`` of the
same bins, named ``<prefix>.<group>.<name>`` (``field:dl_header.op`` is
``ualink_ref.field.dl_header_op``: cocotb-coverage reads dots as its tree; the prefix
is not ``ualink``, so that no name reads as a Wireshark field). A testbench
samples what it drives or checks with the same samplers the vectors use, and gets both
reports — ours (waivers, holes, closure) and cocotb-coverage's ``coverage_db`` (its
report and XML/YAML export)::

    import cocotb
    from cocotb_coverage.coverage import coverage_db
    from ualink_ref.testing.coverage.cocotb_adapter import mirrored_coverage
    from ualink_ref.testing.coverage.wire import sample_dl_flit

    @cocotb.test()
    async def flits(dut):
        cov = mirrored_coverage()
        for flit in stimulus:            # the DL flits the bench drives
            sample_dl_flit(cov, flit)
            ...                          # drive, check
        coverage_db.report_coverage(cocotb.log.info, bins=True)
        coverage_db.export_to_xml("ualink_coverage.xml")
        print(cov.report(select="field:dl_").summary())

cocotb-coverage is imported only here, when called (specs/coverage.md, "Why our own
model": it requires cocotb, so it is no core dependency).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ualink_ref.testing.coverage.model import Coverage, CoverageModel
from ualink_ref.testing.coverage.points import coverage_model


def cocotb_name(prefix: str, group: str, point: str) -> str:
    """The cocotb-coverage path of one of our points."""
    safe = point.split(":", 1)[-1].replace(".", "_")  # the group is already in the path
    return f"{prefix}.{group}.{safe}"


class MirroredCoverage(Coverage):
    """A :class:`Coverage` that also samples each hit into cocotb-coverage."""

    def __init__(self, model: CoverageModel, prefix: str = "ualink_ref") -> None:
        super().__init__(model)
        from cocotb_coverage.coverage import CoverPoint

        self._samplers: dict[str, Callable[[str], None]] = {}
        for point in model.points.values():
            def sink(bin_name: str) -> None:
                """cocotb-coverage samples the argument against the point's bins."""

            decorate: Any = CoverPoint(cocotb_name(prefix, point.group, point.name),
                                       xf=lambda bin_name: bin_name, bins=list(point.bins))
            self._samplers[point.name] = decorate(sink)

    def hit(self, point: str, bin_name: str, count: int = 1) -> None:
        """Count the hit here and sample it into cocotb-coverage ``count`` times."""
        super().hit(point, bin_name, count)
        for _ in range(count):
            self._samplers[point](bin_name)


def mirrored_coverage(prefix: str = "ualink_ref") -> MirroredCoverage:
    """A fresh :class:`MirroredCoverage` over the declared model (needs cocotb-coverage)."""
    return MirroredCoverage(coverage_model(), prefix)


__all__ = ["MirroredCoverage", "cocotb_name", "mirrored_coverage"]
