"""DL link states, retrain and the DL messages that act (sans-IO).

A :class:`LinkManager` sits on one :class:`~ualink_ref.dl.DataLink` and runs
the link state machine beside it: the states, the table :data:`TRANSITIONS`
(``(state, input) -> (action, next state)``; a pair not in it changes nothing)
and rules L1-L10 are stated once, with their provenance, in specs/dl.md
section 8; docstrings here cite them by number.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ualink_ref.dl import messages as dlm
from ualink_ref.dl.config import LinkStateConfig
from ualink_ref.dl.datalink import DataLink
from ualink_ref.dl.events import DLEvent, DLMessageReceived, RetrainNeeded, TLFlitDelivered


class LinkState(Enum):
    """The state of one end of a link (rule L1)."""

    DOWN = "down"
    TRAINING = "training"
    UP = "up"
    IDLE = "idle"
    FAULT = "fault"

    @property
    def carries_data(self) -> bool:
        """True in the states that send TL data (``up``, ``idle``)."""
        return self is LinkState.UP or self is LinkState.IDLE


#: Event types ``on_events`` has nothing to do for.
_ONLY_DELIVERIES = frozenset((TLFlitDelivered,))
#: The two channel-negotiation messages this machine sends (values: one instance each).
_REQUEST_ONLINE = dlm.ChannelNegotiation(dlm.ChannelCommand.REQUEST_ONLINE)
_ACK = dlm.ChannelNegotiation(dlm.ChannelCommand.ACK)


class LinkInput(Enum):
    """What the state machine reacts to (guards already resolved into the input)."""

    START = "start"  # management: bring a down link up
    RETRAIN_NEEDED = "retrain_needed"  # the DL's RetrainNeeded, attempts left
    RETRAIN_EXHAUSTED = "retrain_exhausted"  # the same, max_retrains attempts spent
    PEER_REQUEST = "peer_request"  # ChannelNegotiation(REQUEST_ONLINE) received
    PEER_ACK = "peer_ack"  # ChannelNegotiation(ACK) received
    TRAINED = "trained"  # training period over, handshake complete
    TRAIN_FAILED = "train_failed"  # training period over, no handshake, attempts left
    TRAIN_EXHAUSTED = "train_exhausted"  # the same, max_retrains attempts spent
    QUIET = "quiet"  # nothing to send for idle_after
    TRAFFIC = "traffic"  # something to send again
    PROBE = "probe"  # idle, and the layer above still waits after idle_after (L10)
    FAULT = "fault"  # management: the link's owner gives up on it, in any state (L11)


class LinkAction(Enum):
    """What a transition does (besides changing state)."""

    NONE = "none"
    TRAIN = "train"  # begin a training period, send an online request
    ANSWER = "answer"  # send an ACK to the peer's online request
    ANSWER_AND_TRAIN = "answer_and_train"
    HANDSHAKE = "handshake"  # note that the peer acknowledged this end's request
    RESUME = "resume"  # the DL resumes (DataLink.retrained)
    PROBE = "probe"  # send an online request, expect an ACK within retrain_slots (L10)
    CONFIRM = "confirm"  # the peer answered a probe: it is alive (L10)
    FAIL = "fail"  # fault: the DL discards everything, operations fail


S, In, A = LinkState, LinkInput, LinkAction
#: ``(state, input) -> (action, next state)`` (rule L1); absent pairs change nothing.
TRANSITIONS: dict[tuple[LinkState, LinkInput], tuple[LinkAction, LinkState]] = {
    (S.DOWN, In.START): (A.TRAIN, S.TRAINING),
    (S.DOWN, In.PEER_REQUEST): (A.ANSWER_AND_TRAIN, S.TRAINING),
    (S.TRAINING, In.PEER_REQUEST): (A.ANSWER, S.TRAINING),
    (S.TRAINING, In.PEER_ACK): (A.HANDSHAKE, S.TRAINING),
    (S.TRAINING, In.TRAINED): (A.RESUME, S.UP),
    (S.TRAINING, In.TRAIN_FAILED): (A.TRAIN, S.TRAINING),
    (S.TRAINING, In.TRAIN_EXHAUSTED): (A.FAIL, S.FAULT),
    (S.UP, In.RETRAIN_NEEDED): (A.TRAIN, S.TRAINING),
    (S.UP, In.RETRAIN_EXHAUSTED): (A.FAIL, S.FAULT),
    (S.UP, In.PEER_REQUEST): (A.ANSWER, S.UP),
    (S.UP, In.QUIET): (A.PROBE, S.IDLE),
    (S.UP, In.PEER_ACK): (A.CONFIRM, S.UP),
    (S.IDLE, In.TRAFFIC): (A.NONE, S.UP),
    (S.IDLE, In.PROBE): (A.PROBE, S.IDLE),
    (S.IDLE, In.PEER_ACK): (A.CONFIRM, S.IDLE),
    (S.IDLE, In.RETRAIN_NEEDED): (A.TRAIN, S.TRAINING),
    (S.IDLE, In.RETRAIN_EXHAUSTED): (A.FAIL, S.FAULT),
    (S.IDLE, In.PEER_REQUEST): (A.ANSWER, S.IDLE),
    # L11: an owner's fault is taken in every state but fault itself, so an end
    # given up mid-training (or never trained) cannot come back and carry data.
    **{(state, In.FAULT): (A.FAIL, S.FAULT)
       for state in (S.DOWN, S.TRAINING, S.UP, S.IDLE)},
}
del S, In, A


@dataclass(frozen=True)
class LinkStateChanged:
    """The link went from ``old`` to ``new`` at ``now`` because of ``cause``."""

    old: LinkState
    new: LinkState
    now: float
    cause: str


@dataclass(frozen=True)
class UartReceived:
    """Bytes of the peer's UART stream, in order, each exactly once (rule L8)."""

    data: bytes


#: Events a :class:`LinkManager` adds to the DL's.
LinkEvent = LinkStateChanged | UartReceived


@dataclass
class LinkCounters:
    """Running totals of one :class:`LinkManager`."""

    trainings: int = 0
    trainings_failed: int = 0
    requests_sent: int = 0
    probes_sent: int = 0
    acks_sent: int = 0
    rate_notifications: int = 0
    uart_bytes_sent: int = 0
    uart_bytes_received: int = 0
    vendor_messages: int = 0
    unknown_messages: int = 0


class LinkManager:
    """The link state machine of one end, driving its :class:`DataLink` (rules L1-L10).

    Use it in place of the DataLink's own ``poll`` / timer: ``poll(now)``,
    ``run_timer(now)`` and ``on_events(dl_events, now)`` (every event list the
    DataLink returns). Each returns or appends :class:`LinkStateChanged` and
    :class:`UartReceived` events. ``LinkStateConfig(start_up=False)`` begins ``down`` (call
    :meth:`start`); the default begins ``up``, as an already trained link.
    """

    def __init__(self, dl: DataLink,
                 config: LinkStateConfig = LinkStateConfig()) -> None:  # noqa: B008 (frozen)
        if not isinstance(config, LinkStateConfig):
            raise TypeError(f"LinkManager takes a LinkStateConfig, got {type(config).__name__}")
        self.dl = dl
        self._config = config
        self._retrain_slots = config.retrain_slots
        self._max_retrains = config.max_retrains
        self._request_interval = config.request_interval
        self._idle_after = config.idle_after
        start_up = config.start_up
        self.state = LinkState.UP if start_up else LinkState.DOWN
        self.counters = LinkCounters()
        #: Every state change so far, in order.
        self.changes: list[LinkStateChanged] = []
        # Events produced while polling (state changes to idle and back), until the
        # owner takes them (take_events).
        self._pending: list[DLEvent | LinkEvent] = []
        #: Why the link is in fault (``None`` until then).
        self.fault_reason: str | None = None
        self._attempts = 0
        self._acked_mark = dl.acked
        self._train_end: float | None = None
        self._next_request: float | None = None
        self._handshake = False
        self._quiet_since: float | None = None
        self._probe_deadline: float | None = None  # an unanswered probe's (L10)
        self._next_probe: float | None = None
        self._down_since: float | None = None if start_up else 0.0
        self._time_down = 0.0

    @property
    def config(self) -> LinkStateConfig:
        """The options this end was built with (frozen)."""
        return self._config

    def take_events(self) -> list[DLEvent | LinkEvent]:
        """Hand over the events produced while polling (state changes to idle and back,
        rules L1, L10) and forget them: each is returned exactly once."""
        out, self._pending = self._pending, []
        return out

    # -- the table -------------------------------------------------------------------

    def handle(self, event: LinkInput, now: float, cause: str = "") -> list[DLEvent | LinkEvent]:
        """Apply one input (rule L1); return the state change it caused, if any."""
        entry = TRANSITIONS.get((self.state, event))
        if entry is None:
            return []
        action, new = entry
        out: list[DLEvent | LinkEvent] = []
        if action in (LinkAction.ANSWER, LinkAction.ANSWER_AND_TRAIN):
            self.dl.send_message(_ACK, control=True)
            self.counters.acks_sent += 1
        if action in (LinkAction.TRAIN, LinkAction.ANSWER_AND_TRAIN):
            self._begin_training(now)
        elif action is LinkAction.HANDSHAKE:
            self._handshake = True
        elif action is LinkAction.RESUME:
            self._train_end = self._next_request = None
            out.extend(self.dl.retrained(now))
        elif action is LinkAction.PROBE:
            self.dl.send_message(_REQUEST_ONLINE, control=True)
            self.counters.probes_sent += 1
            if self._probe_deadline is None:
                self._probe_deadline = now + self._retrain_slots
            self._next_probe = now + self._idle_after
        elif action is LinkAction.CONFIRM:
            self._probe_deadline = None
        elif action is LinkAction.FAIL:
            self._train_end = self._next_request = None
            self.fault_reason = cause or event.value
            self.dl.discard()
        if new is not self.state:
            old, self.state = self.state, new
            if new.carries_data and self._down_since is not None:
                self._time_down += now - self._down_since
                self._down_since = None
            elif not new.carries_data and self._down_since is None:
                self._down_since = now
            change = LinkStateChanged(old, new, now, cause or event.value)
            self.changes.append(change)
            out.append(change)
        return out

    def start(self, now: float) -> list[DLEvent | LinkEvent]:
        """Bring a ``down`` link up: begin training (rule L2)."""
        return self.handle(LinkInput.START, now, "start")

    def _begin_training(self, now: float) -> None:
        self._probe_deadline = self._next_probe = None
        self._attempts += 1
        self.counters.trainings += 1
        self._handshake = False
        self._train_end = now + self._retrain_slots
        self._next_request = now

    # -- driving ---------------------------------------------------------------------

    def time_down(self, now: float) -> float:
        """Time spent in states that carry no data (down, training, fault) up to ``now``."""
        extra = now - self._down_since if self._down_since is not None else 0.0
        return self._time_down + max(0.0, extra)

    def next_timer(self) -> float | None:
        """When :meth:`run_timer` must next be called, or ``None``."""
        if self.state is LinkState.TRAINING:
            return self._train_end
        if not self.state.carries_data:
            return None
        deadline = self.dl.next_timer()
        if self._probe_deadline is not None:
            return min(self._probe_deadline, deadline or self._probe_deadline)
        return deadline

    def run_timer(self, now: float) -> list[DLEvent | LinkEvent]:
        """Run the training timer or (up / idle) the DL's replay timer."""
        if self.state is LinkState.TRAINING:
            if self._train_end is None or now < self._train_end:
                return []
            if self._handshake:
                return self.handle(LinkInput.TRAINED, now, "trained")
            self.counters.trainings_failed += 1
            self._progress()
            spent = self._attempts >= self._max_retrains
            return self.handle(
                LinkInput.TRAIN_EXHAUSTED if spent else LinkInput.TRAIN_FAILED, now,
                f"{self._attempts} training(s) without progress, no answer from the peer"
                if spent else "training failed")
        if not self.state.carries_data:
            return []
        if self._probe_deadline is not None and now >= self._probe_deadline:
            self._probe_deadline = None  # L10: the peer is silent; as RetrainNeeded
            return self._retrain_needed(now, "no answer to the idle probe")
        deadline = self.dl.next_timer()
        if deadline is None or now < deadline:
            return []
        out: list[DLEvent | LinkEvent] = list(self.dl.handle_timer(now))
        self.on_events(out, now)
        return out

    def poll(self, now: float, waiting: bool = False) -> bytes | None:
        """The DL flit this end sends in slot ``now`` (by state, rules L1-L3), or ``None``.

        ``waiting``: the layer above has work outstanding on the peer (L10 probes
        again while it waits in ``idle``)."""
        state = self.state
        if state is LinkState.TRAINING:
            if self._next_request is not None and now >= self._next_request:
                self.dl.send_message(_REQUEST_ONLINE, control=True)
                self.counters.requests_sent += 1
                self._next_request = now + self._request_interval
            return self.dl.poll_control(now)
        if not state.carries_data:
            return None
        control_only = self.dl.control_only
        flit = self.dl.poll(now)
        if (flit is None or control_only) and self.dl.idle:  # L10: control is not traffic
            if self._quiet_since is None:
                self._quiet_since = now
            elif state is LinkState.UP and now - self._quiet_since >= self._idle_after:
                self._pending.extend(self.handle(LinkInput.QUIET, now, "quiet"))
            elif (state is LinkState.IDLE and waiting and self._next_probe is not None
                  and now >= self._next_probe):
                self._pending.extend(self.handle(LinkInput.PROBE, now, "probe"))
        else:
            self._quiet_since = None
            if state is LinkState.IDLE:
                self._pending.extend(self.handle(LinkInput.TRAFFIC, now, "traffic"))
        return flit

    def on_events(self, events: list[DLEvent | LinkEvent], now: float) -> None:
        """React to the DL's events (in place: appends what the reactions produce)."""
        if _ONLY_DELIVERIES.issuperset(map(type, events)):
            return  # the common list: delivered TL flits only, nothing to react to
        i = 0
        while i < len(events):
            event = events[i]
            i += 1
            if isinstance(event, RetrainNeeded):
                events[i:i] = self._retrain_needed(now, "replays still futile")
            elif isinstance(event, DLMessageReceived):
                extra = self._message(event, now)
                if extra:
                    events[i:i] = extra
                    i += len(extra)

    def _message(self, event: DLMessageReceived, now: float) -> list[DLEvent | LinkEvent]:
        msg = event.message
        if isinstance(msg, dlm.ChannelNegotiation):
            if msg.command is dlm.ChannelCommand.REQUEST_ONLINE:
                return self.handle(LinkInput.PEER_REQUEST, now, "peer asked to train")
            if msg.command is dlm.ChannelCommand.ACK:
                return self.handle(LinkInput.PEER_ACK, now, "peer answered")
        elif isinstance(msg, dlm.UartData):
            if msg.data:
                self.counters.uart_bytes_received += len(msg.data)
                return [UartReceived(msg.data)]
        elif isinstance(msg, dlm.TLRateNotification):
            self.dl.set_tx_rate(msg.rate, now)
        elif isinstance(msg, dlm.UnknownMessage):
            self.counters.unknown_messages += 1
        elif isinstance(msg, dlm.VendorMessage):
            self.counters.vendor_messages += 1
        return []

    def _retrain_needed(self, now: float, why: str) -> list[DLEvent | LinkEvent]:
        """RetrainNeeded (L2), or fault once ``max_retrains`` attempts are spent (L5)."""
        self._progress()
        spent = self._attempts >= self._max_retrains
        return self.handle(
            LinkInput.RETRAIN_EXHAUSTED if spent else LinkInput.RETRAIN_NEEDED, now,
            f"{self._attempts} retrain(s) without progress, {why}" if spent
            else "retrain needed" if why == "replays still futile" else f"retrain needed: {why}")

    def _progress(self) -> None:
        """Attempts count only trainings since the acknowledged point last moved (L5)."""
        if self.dl.acked != self._acked_mark:
            self._acked_mark = self.dl.acked
            self._attempts = 0

    # -- sending -------------------------------------------------------------------

    def uart_send(self, data: bytes) -> None:
        """Queue ``data`` (any length) on the UART stream (rule L8)."""
        data = bytes(data)
        for i in range(0, len(data), 2):
            self.dl.send_message(dlm.UartData(data[i:i + 2]), reliable=True)
        self.counters.uart_bytes_sent += len(data)

    def notify_rate(self, rate: int) -> None:
        """Ask the peer to pace its data to (rate + 1)/256 of full rate (rule L7)."""
        self.dl.send_message(dlm.TLRateNotification(rate), reliable=True)
        self.counters.rate_notifications += 1


__all__ = [
    "TRANSITIONS",
    "LinkAction",
    "LinkCounters",
    "LinkEvent",
    "LinkInput",
    "LinkManager",
    "LinkState",
    "LinkStateChanged",
    "UartReceived",
]
