"""When the fast fidelity's figures cannot be trusted (``specs/fast.md`` rule V3).

The engine has no credits or buffers, bit errors or faults (rule E6). So a run is
flagged untrusted, with the reason, when

* V3a (an offered, open-loop load): a downlink queue ever held more request data than
  one switch ingress can buffer (CBFC: the buffer its credits grant; PFC: the pause
  threshold XOFF) — the exact pod's switch would hold the sender back, by credits or a
  pause, and so delay its traffic to every other destination (head-of-line blocking);
* V3b (open loop): a downlink was busy more than :data:`OPEN_LOOP_BUSY` of its active
  time — near saturation the exact pod's queues decide the latency;
* V3c: the links have bit errors (``ber`` > 0): no replays are modelled;
* V3d: the pod is larger than any the agreement table validated
  (:data:`VALIDATED_ACCELERATORS`): extrapolated, not validated;
* V3e (a collective in bursts, rule P6): the run's bursts are not its algorithm's
  validated large run (``ualink_ref.fast.collective.large_config``: the burst, admit
  share and whole or within-the-limit batches the burst table measured), or a batch is a
  larger share of ``max_outstanding`` than the table measured
  (``ualink_ref.fast.collective.MEASURED_BATCH_SHARE``); that module adds the reasons,
  since it knows the run's mode.

A collective is a closed loop (each rank keeps at most ``max_outstanding`` operations in
flight and waits on its peers), and the table shows the queue rules V3a/V3b do not mark
where it goes wrong there, so they apply to offered loads only.
"""

from __future__ import annotations

from ualink_ref.fast.calibrate import TL_FLITS_PER_SLOT
from ualink_ref.fast.engine import Engine
from ualink_ref.sim.fabric import SWITCH_BUFFER, FabricConfig, pfc_for
from ualink_ref.tl.credits import NUM_VCS


def buffer_slots(config: FabricConfig) -> float:
    """Link slots of data one switch ingress holds before it holds its sender back: the
    CBFC buffer (64-byte buffers), or under PFC the XOFF threshold (rule V3)."""
    buffer = config.buffer or SWITCH_BUFFER
    if config.flow_control == "pfc":
        buffers = float((config.pfc or pfc_for(config, buffer)).xoff)
    else:
        buffers = float(sum(buffer.pool) + sum(buffer.per_vc) * NUM_VCS)
    return buffers / TL_FLITS_PER_SLOT


#: An offered (open-loop) workload is trusted while every downlink stays below this busy
#: share (rule V3; project choice from the validation table, specs/fast.md: above it the
#: exact switch's egress, whose packing of mixed small operations and credit loop the
#: engine prices per shape, not per mix, may saturate first and queue without bound).
OPEN_LOOP_BUSY = 0.8


#: The most accelerators of a pod in the agreement table (V3d).
VALIDATED_ACCELERATORS = 64


def untrusted_reasons(engine: Engine, config: FabricConfig,
                      open_loop: bool = False) -> tuple[str, ...]:
    """Rule V3 for a finished run: why its figures may be off the exact pod's (empty:
    within what the agreement table validated)."""
    out = []
    if config.ber > 0:
        out.append(f"bit errors (BER {config.ber:g}): this fidelity models no replays")
    if config.accelerators > VALIDATED_ACCELERATORS:
        out.append(f"{config.accelerators} accelerators: extrapolated past the agreement "
                   f"table's largest pod ({VALIDATED_ACCELERATORS}); not validated")
    if not open_loop:
        return tuple(out)
    limit = buffer_slots(config)
    downlinks = [q for plane in engine.down for q in plane]
    worst = max(downlinks, key=lambda q: q.peak_backlog)
    what = "pauses (PFC)" if config.flow_control == "pfc" else "credit back-pressure (CBFC)"
    if worst.peak_backlog > limit:
        out.append(f"downlink {worst.name} queued {worst.peak_backlog:.0f} slots of requests, "
                   f"more than one switch ingress buffers ({limit:.0f}): the exact pod would "
                   f"hold senders back by {what}, with head-of-line blocking, which this "
                   "fidelity does not model")
    busiest = max(downlinks, key=lambda q: q.busy_share)
    if busiest.busy_share > OPEN_LOOP_BUSY:
        out.append(f"downlink {busiest.name} was busy {100 * busiest.busy_share:.0f} % of its "
                   f"active time (above {100 * OPEN_LOOP_BUSY:.0f} %): near saturation the "
                   f"exact pod's queues and {what} decide the latency, which this fidelity "
                   "does not model")
    return tuple(out)


__all__ = ["OPEN_LOOP_BUSY", "VALIDATED_ACCELERATORS", "buffer_slots", "untrusted_reasons"]
