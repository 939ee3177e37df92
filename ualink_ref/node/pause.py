"""Priority flow control at one switch ingress port (specs/fabric.md S8).

The port pauses its peer's TL when its occupied buffers reach XOFF and resumes it
at XON or below; the peer obeys ``delay`` slots later. One priority class in this
model's workloads: every VC pauses together (project choice, S8).
"""

from __future__ import annotations

from typing import Protocol

from ualink_ref.node.config import PfcConfig


class Pausable(Protocol):
    """The peer a pause reaches: a :class:`~ualink_ref.node.linkend.LinkEnd`."""

    def schedule_pause(self, at: float, paused: bool) -> None:
        """Pause (or resume) from slot ``at`` on."""
        ...


class PauseControl:
    """The pause state of one ingress port and what it has sent its peer."""

    def __init__(self, config: PfcConfig) -> None:
        self.config = config
        self.peer: Pausable | None = None
        self._paused_since: float | None = None  # when the peer's pause began
        #: Pauses sent, and slots the peer spent paused (resumed pauses only).
        self.pauses = 0
        self.pause_slots = 0.0
        #: Fields that arrived with more buffers occupied than the physical ``limit``.
        self.headroom_exceeded = 0

    @property
    def paused(self) -> bool:
        """True while the peer is (or is about to be) paused."""
        return self._paused_since is not None

    def after_arrival(self, occupied: int, now: float) -> None:
        """A field arrived, leaving ``occupied`` buffers taken: pause at XOFF."""
        if occupied > self.config.limit:
            self.headroom_exceeded += 1
        if self._paused_since is None and occupied >= self.config.xoff:
            at = now + self.config.delay
            self._paused_since = at
            self.pauses += 1
            self._tell_peer(at, True)

    def after_release(self, occupied: int, now: float) -> None:
        """Buffers were freed, leaving ``occupied`` taken: resume at XON or below."""
        if self._paused_since is not None and occupied <= self.config.xon:
            at = now + self.config.delay
            self.pause_slots += max(0.0, at - self._paused_since)
            self._paused_since = None
            self._tell_peer(at, False)

    def _tell_peer(self, at: float, paused: bool) -> None:
        if self.peer is not None:
            self.peer.schedule_pause(at, paused)


__all__ = ["Pausable", "PauseControl"]
