"""Link timing defaults the harness's users share: the replay timeout a link of a given
latency needs, and the stall watchdog's length (specs/README.md, "Faults", rule S2)."""

from __future__ import annotations

from ualink_ref.dl.config import DLConfig

#: The DL's own default replay timeout, in flit slots (128).
_DL_REPLAY_TIMEOUT = DLConfig().replay_timeout


#: Default stall watchdog, in replay timeouts: a run with no progress for this many
#: timeouts (16 replays, 4 retrain requests at the default ``max_replays``) is stalled.
STALL_TIMEOUTS = 16


def stall_slots_for(replay_timeout: float) -> int:
    """The watchdog's default ``stall_slots`` K: ``STALL_TIMEOUTS`` replay timeouts.

    Progress is a completion or a DL advance (an acknowledgement or an accepted
    data flit, either direction); a link that recovers from an error at all does
    so with a replay within one or two timeouts, so 16 without any advance means
    nothing gets through (rule S2 in ``specs/README.md``, "Faults").
    """
    return int(STALL_TIMEOUTS * replay_timeout)


def replay_timeout_for(latency: int, batch: int) -> int:
    """Replay timeout (flit slots) the simulation gives both DLs unless told otherwise.

    A flit waits up to ``batch`` slots in its batch, ``batch + latency`` on the
    wire, and its ack as long again coming back. The DL requires the timeout to
    exceed the round trip plus the peer's ack delay (a quarter of the timeout,
    DL rule 8), i.e. 4/3 of the round trip; ``4 * (latency + batch) + 64`` is
    safely more, so the wire delay alone never sets off the timer. Never below
    the DL's default (128), so the default link (latency 8, batch 8) keeps it.
    """
    return max(int(_DL_REPLAY_TIMEOUT), 4 * (latency + batch) + 64)
