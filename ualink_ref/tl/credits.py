"""Credit-based flow control (CBFC) for the transaction layer: the two books of one end.

:class:`SenderCredits` holds what the peer granted this end (spent per field sent,
VC first, then the pool; bounded by ``max_available``, rule B4); :class:`ReceiverCredits`
holds what this end granted its peer (checked per field received, freed buffers owed
back, returns taken one field per source). The rules and their provenance are
``specs/tl.md`` rule 4 and its section "Credit-based flow control"; :class:`SenderBook`
and :class:`ReceiverBook` are frozen snapshots of the books for an audit.
"""

from __future__ import annotations

from dataclasses import dataclass

from ualink_ref.errors import ConfigError, CreditError

REQ_CMD, RSP_CMD, REQ_DATA, RSP_DATA = 0, 1, 2, 3
CLASS_NAMES = ("req_cmd", "rsp_cmd", "req_data", "rsp_data")
NUM_VCS = 4
POOL = NUM_VCS  # index of the shared pool in per-source arrays

#: Largest increment one field can carry, per class: FTYPE 0 (pool), FTYPE 6 (VC).
POOL_RETURN_MAX = (63, 63, 255, 255)
VC_RETURN_MAX = (31, 31, 255, 255)
#: Most credits of each class one field can need: a 256-byte Write takes a
#: byte-enable buffer plus 4 beats; a 256-byte read response 4 beats.
MAX_NEED = (1, 1, 5, 4)


@dataclass(frozen=True)
class CreditConfig:
    """Receive-buffer capacity a TL grants its peer, per VC and in the pool.

    Each tuple is ``(req_cmd, rsp_cmd, req_data, rsp_data)``; data in 64-byte
    buffers. The defaults are a project choice sized so that a link with a few
    DL flits of round trip does not stall on credits.
    """

    # Four counts each, checked by __post_init__ (a wrong length is a ConfigError).
    per_vc: tuple[int, ...] = (16, 16, 32, 32)
    pool: tuple[int, ...] = (256, 256, 512, 512)

    def capacity(self, source: int) -> tuple[int, ...]:
        """Capacity of ``source`` (a VC number, or :data:`POOL`)."""
        return self.pool if source == POOL else self.per_vc

    def __post_init__(self) -> None:
        for name in ("per_vc", "pool"):
            values = getattr(self, name)
            if isinstance(values, list):  # a list given (parsed JSON, say) is kept as a tuple
                values = tuple(values)
                object.__setattr__(self, name, values)
            if (not isinstance(values, tuple) or len(values) != 4
                    or any(isinstance(v, bool) or not isinstance(v, int) or v < 0
                           for v in values)):
                raise ConfigError(name, f"credit capacities are four non-negative integers, "
                                        f"got {values!r}")


#: Four counts per source: sources 0..3 are the VCs, :data:`POOL` the shared pool.
Rows = tuple[tuple[int, int, int, int], ...]


def _rows(table: list[list[int]]) -> Rows:
    return tuple((row[0], row[1], row[2], row[3]) for row in table)


@dataclass(frozen=True, slots=True)
class SenderBook:
    """A snapshot of :class:`SenderCredits`: what the peer granted and this end holds."""

    available: Rows  # per source, per class: credits held, not yet spent
    received_total: tuple[int, int, int, int]  # per class, granted since the start
    spent_total: tuple[int, int, int, int]  # per class, spent since the start


@dataclass(frozen=True, slots=True)
class ReceiverBook:
    """A snapshot of :class:`ReceiverCredits`: the buffers this end granted its peer."""

    capacity: Rows  # per source, per class: the buffers configured (CreditConfig)
    outstanding: Rows  # credits the peer holds (granted, not yet used)
    occupied: Rows  # buffers in use: consumed by a received field, not yet freed
    owed: Rows  # credits freed and not yet returned

    def balanced(self, source: int) -> bool:
        """True when ``source``'s books are closed: nothing occupied or owed, and the
        peer holds the whole capacity."""
        return (not any(self.occupied[source]) and not any(self.owed[source])
                and self.outstanding[source] == self.capacity[source])


class SenderCredits:
    """Credits this side may spend (granted by the peer), per source and class.

    ``max_available`` bounds each (source, class) counter: a grant that would
    take one past it raises :class:`CreditError` and changes nothing (a peer
    cannot make this end count without bound; ``specs/tl.md`` rule B4).
    """

    __slots__ = ("available", "max_available", "received_total", "spent_total")

    def __init__(self, max_available: int = 1 << 16) -> None:
        # available[source][class]; source 0..3 = VC, 4 = pool. Start at zero.
        self.available: list[list[int]] = [[0, 0, 0, 0] for _ in range(NUM_VCS + 1)]
        self.max_available = max_available
        self.received_total = [0, 0, 0, 0]
        self.spent_total = [0, 0, 0, 0]

    def snapshot(self) -> SenderBook:
        """These books as a frozen value (for an audit; the counters go on changing)."""
        return SenderBook(_rows(self.available),
                          (self.received_total[0], self.received_total[1],
                           self.received_total[2], self.received_total[3]),
                          (self.spent_total[0], self.spent_total[1],
                           self.spent_total[2], self.spent_total[3]))

    def grant(self, source: int, cls: int, count: int) -> None:
        """Add ``count`` credits returned by the peer (``CreditError`` past the maximum)."""
        counts = [0, 0, 0, 0]
        counts[cls] = count
        self.grant_all(source, (counts[0], counts[1], counts[2], counts[3]))

    def grant_all(self, source: int, counts: tuple[int, int, int, int]) -> None:
        """Add one flow-control field's returns, all classes or none.

        Raises :class:`CreditError` (nothing added) when a class would exceed
        ``max_available``.
        """
        avail = self.available[source]
        limit = self.max_available
        for cls in range(4):
            if avail[cls] + counts[cls] > limit:
                where = "pool" if source == POOL else f"VC {source}"
                raise CreditError(
                    f"peer granted {counts[cls]} {CLASS_NAMES[cls]} credits on {where} "
                    f"holding {avail[cls]}: more than the maximum {limit}"
                )
        total = self.received_total
        for cls in range(4):
            avail[cls] += counts[cls]
            total[cls] += counts[cls]

    def take(self, vc: int, cmd_cls: int, data_cls: int, data: int) -> int:
        """Spend one command credit and ``data`` data credits; return the source.

        Returns ``vc`` or :data:`POOL`, or ``-1`` (nothing spent) when neither
        has enough.
        """
        # The VC first, then the pool (written out: this runs for every field sent).
        source = vc
        avail = self.available[vc]
        if avail[cmd_cls] < 1 or avail[data_cls] < data:
            source = POOL
            avail = self.available[POOL]
            if avail[cmd_cls] < 1 or avail[data_cls] < data:
                return -1
        avail[cmd_cls] -= 1
        avail[data_cls] -= data
        spent = self.spent_total
        spent[cmd_cls] += 1
        spent[data_cls] += data
        return source


class ReceiverCredits:
    """Buffers this side granted the peer: checks use, accumulates returns."""

    __slots__ = ("config", "occupied", "outstanding", "owed", "owed_any", "thresholds", "urgent")

    def __init__(self, config: CreditConfig) -> None:
        self.config = config
        # Credits the peer holds (granted, not yet used) — mirrors its SenderCredits.
        self.outstanding: list[list[int]] = [[0, 0, 0, 0] for _ in range(NUM_VCS + 1)]
        # Buffers in use: consumed by a received field and not yet freed.
        self.occupied: list[list[int]] = [[0, 0, 0, 0] for _ in range(NUM_VCS + 1)]
        # Credits to return at the next opportunity: initially the whole capacity.
        self.owed: list[list[int]] = [
            list(config.capacity(s)) for s in range(NUM_VCS + 1)
        ]
        self.owed_any = any(any(row) for row in self.owed)
        self.thresholds = return_thresholds(config)
        # True when some class owes at least its threshold: worth a credit-only flit.
        self.urgent = self.owed_any

    def snapshot(self) -> ReceiverBook:
        """These books as a frozen value (for an audit; the counters go on changing)."""
        capacity = tuple(self.config.capacity(s) for s in range(NUM_VCS + 1))
        return ReceiverBook(tuple((c[0], c[1], c[2], c[3]) for c in capacity),
                            _rows(self.outstanding), _rows(self.occupied), _rows(self.owed))

    def urge(self) -> bool:
        """Have whatever is owed returned at the next control half-flit, even below the
        batching threshold (``specs/tl.md`` rule 4); True when anything is owed."""
        if self.owed_any:
            self.urgent = True
        return self.owed_any

    def consume(self, source: int, cmd_cls: int, data_cls: int, data: int) -> None:
        """The peer used credits; raise :class:`CreditError` if it had none."""
        if not 0 <= source <= POOL:
            raise CreditError(f"credit source {source} out of range")
        out = self.outstanding[source]
        if out[cmd_cls] < 1 or out[data_cls] < data:
            where = "pool" if source == POOL else f"VC {source}"
            raise CreditError(
                f"peer sent without credit on {where}: needs {CLASS_NAMES[cmd_cls]}=1 "
                f"{CLASS_NAMES[data_cls]}={data}, holds {out[cmd_cls]}/{out[data_cls]}"
            )
        out[cmd_cls] -= 1
        out[data_cls] -= data
        occ = self.occupied[source]
        occ[cmd_cls] += 1
        occ[data_cls] += data

    def free(self, source: int, cmd_cls: int, data_cls: int, data: int) -> None:
        """Buffers freed: their credits are owed back to the peer."""
        occ = self.occupied[source]
        occ[cmd_cls] -= 1
        occ[data_cls] -= data
        owed = self.owed[source]
        owed[cmd_cls] += 1
        owed[data_cls] += data
        self.owed_any = True
        if not self.urgent:
            limits = self.thresholds[source]
            self.urgent = (0 < limits[cmd_cls] <= owed[cmd_cls]) or (
                0 < limits[data_cls] <= owed[data_cls]
            )

    def take_returns(self, limit: int = NUM_VCS + 1) -> list[tuple[int, tuple[int, int, int, int]]]:
        """Pop one field's worth of returns for up to ``limit`` sources that owe any.

        Returns ``[(source, (req_cmd, rsp_cmd, req_data, rsp_data))]``; each
        entry fits one flow-control field. The popped credits count as
        outstanding from now on (the field is about to be sent).
        """
        result: list[tuple[int, tuple[int, int, int, int]]] = []
        any_left = False
        for source in (POOL, 0, 1, 2, 3):
            owed = self.owed[source]
            if not (owed[0] or owed[1] or owed[2] or owed[3]):
                continue
            if len(result) >= limit:
                any_left = True
                continue
            limits = POOL_RETURN_MAX if source == POOL else VC_RETURN_MAX
            counts = (
                min(owed[0], limits[0]),
                min(owed[1], limits[1]),
                min(owed[2], limits[2]),
                min(owed[3], limits[3]),
            )
            out = self.outstanding[source]
            for cls in range(4):
                owed[cls] -= counts[cls]
                out[cls] += counts[cls]
            if owed[0] or owed[1] or owed[2] or owed[3]:
                any_left = True
            result.append((source, counts))
        self.owed_any = any_left
        self.urgent = any_left and self._any_urgent()
        return result

    def _any_urgent(self) -> bool:
        for source, limits in enumerate(self.thresholds):
            owed = self.owed[source]
            for cls in range(4):
                if 0 < limits[cls] <= owed[cls]:
                    return True
        return False


def check_option(option: str, value: object) -> None:
    """Raise :class:`ConfigError` naming ``option`` unless ``value`` is a
    :class:`CreditConfig` that passes :func:`check_config` (for every configuration
    that holds receive buffers: a TL's, a switch's, a run's end b)."""
    if not isinstance(value, CreditConfig):
        raise ConfigError(option, f"must be a CreditConfig, got {value!r}")
    try:
        check_config(value, option)
    except ConfigError as exc:
        raise ConfigError(option, str(exc).removeprefix(f"{option}: ")) from None


def check_config(config: CreditConfig, option: str = "credits") -> None:
    """Raise :class:`ConfigError` unless every VC can carry a maximal request and response.

    A field takes all its credits from its VC or all from the pool, so for
    each pair (command class, data class) the VC or the pool must hold one
    command credit and the largest data need at once; otherwise a large
    operation could wait forever.
    """
    for cmd_cls, data_cls in ((REQ_CMD, REQ_DATA), (RSP_CMD, RSP_DATA)):
        need = MAX_NEED[data_cls]
        if not any(
            cap[cmd_cls] >= 1 and cap[data_cls] >= need for cap in (config.per_vc, config.pool)
        ):
            raise ConfigError(
                option, f"cannot carry a maximal field: {CLASS_NAMES[cmd_cls]} >= 1 and "
                f"{CLASS_NAMES[data_cls]} >= {need} are needed in the VC or in the pool"
            )


def return_thresholds(config: CreditConfig) -> list[tuple[int, int, int, int]]:
    """Owed count per (source, class) that makes a credit-only flit worth sending."""
    rows = []
    for source in range(NUM_VCS + 1):
        cap = config.capacity(source)
        row = []
        for cls in range(4):
            if cap[cls] <= 0:
                row.append(0)
            else:
                row.append(max(1, min(cap[cls] // 2, cap[cls] - MAX_NEED[cls] + 1)))
        rows.append((row[0], row[1], row[2], row[3]))
    return rows


__all__ = [
    "CLASS_NAMES",
    "MAX_NEED",
    "NUM_VCS",
    "POOL",
    "POOL_RETURN_MAX",
    "REQ_CMD",
    "REQ_DATA",
    "RSP_CMD",
    "RSP_DATA",
    "VC_RETURN_MAX",
    "CreditConfig",
    "ReceiverBook",
    "ReceiverCredits",
    "Rows",
    "SenderBook",
    "SenderCredits",
    "check_config",
    "check_option",
    "return_thresholds",
]
