"""Collectives on the exact pod: programs of memory operations, the algorithms that build
them, their run on :class:`~ualink_ref.sim.fabric.Fabric` and the architects' metrics
(``specs/collectives.md``)."""
