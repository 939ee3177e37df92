"""The DL receive cross (replay state x input) of a ``retry_scenario`` case.

The state is the receive table's (``RX_TRANSITIONS``, specs/dl.md section 6), and
it is read from the model's own :class:`~ualink_ref.dl.receive.Receiver`, never
re-derived: for each direction the flits of the case's ``wire`` are fed, as they
arrived, into a fresh receiver through its public methods —

* a flit sent in slot ``s`` arrives in slot ``s + delay``, after the receiving
  end's own sends of that slot (the harness's ``last_slot`` edge); the channel
  script of the inputs (``faults_ab`` / ``faults_ba``) drops it or flips the least
  significant bit of byte 320, as the scenario's channel does;
* the receiving end's replay requests on the other direction's wire are its
  ``request_sent`` inputs —

and the cell ``(state before, input)`` is sampled for each input. The input a
flit was is read from the receiver's counters (accepted, duplicate, or an error).
The replay is checked against the case: unless the receiver ends with the counters
the file records for that end (accepted, CRC errors, malformed, sequence errors,
duplicates), nothing of that direction is sampled — a file this reading does not
reproduce is not guessed at.
"""

from __future__ import annotations

from typing import Any

from ualink_ref.dl import events as ev
from ualink_ref.dl.config import DLConfig
from ualink_ref.dl.flit import DLFlit
from ualink_ref.dl.formats import FlitOp, header_op
from ualink_ref.dl.receive import Receiver, RxInput, RxState
from ualink_ref.errors import CrcError, DecodeError, UALinkError
from ualink_ref.testing.coverage.model import Coverage
from ualink_ref.testing.coverage.points import DL_RECEIVE

_CHECKED = ("data_flits_accepted", "crc_errors", "malformed", "sequence_errors", "duplicates")
_CORRUPT_BYTE = 320  # the channel script's corruption (specs/vectors.md, retry_scenario)


def _arrivals(inputs: dict[str, Any], wire: list[Any], rx_dir: str,
              tx_dir: str) -> list[tuple[float, int, bytes | None]]:
    """(slot, order, flit or None for a request sent) for the end receiving ``rx_dir``."""
    delay = inputs["delay"]
    script = inputs.get(f"faults_{rx_dir}") or {}
    out: list[tuple[float, int, bytes | None]] = []
    index = 0
    for entry in wire:
        data = bytes.fromhex(entry["flit"])
        if entry["dir"] == rx_dir:
            fault = script.get(str(index))
            index += 1
            if fault == "drop":
                continue
            if fault == "corrupt":
                flipped = bytearray(data)
                flipped[_CORRUPT_BYTE] ^= 1
                data = bytes(flipped)
            out.append((entry["slot"] + delay, 1, data))
        elif entry["dir"] == tx_dir and len(data) >= 3 and \
                header_op(data) == FlitOp.REPLAY_REQUEST:
            out.append((entry["slot"], 0, None))  # sends come first in a slot
    out.sort(key=lambda item: (item[0], item[1]))
    return out


def _feed(rx: Receiver, slot: float, data: bytes | None) -> RxInput | None:
    if data is None:
        rx.request_sent()
        return RxInput.REQUEST_SENT
    try:
        flit = DLFlit.decode(data)
    except CrcError as exc:
        rx.on_bad_flit(ev.CrcErrorDetected(exc.expected, exc.actual))
        return RxInput.ERROR
    except DecodeError as exc:
        rx.on_bad_flit(ev.MalformedFlit(str(exc)))
        return RxInput.ERROR
    if not flit.tl:
        rx.on_flit(flit, slot, [])
        return None  # no sequence number: not an input of the table (rule 1)
    before = rx.counters
    rx.on_flit(flit, slot, [])
    after = rx.counters
    if after.data_flits_accepted > before.data_flits_accepted:
        return RxInput.ACCEPTED
    if after.duplicates > before.duplicates:
        return RxInput.DUPLICATE
    return RxInput.ERROR


def sample_receive(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    """Sample :data:`DL_RECEIVE` from one ``retry_scenario`` case (module docstring)."""
    try:
        timeout = inputs.get("replay_timeout", 128)
        for end, rx_dir, tx_dir in (("b", "ab", "ba"), ("a", "ba", "ab")):
            rx = Receiver(DLConfig(replay_timeout=timeout))
            cells: list[tuple[RxState, RxInput]] = []
            for slot, _order, data in _arrivals(inputs, expected["wire"], rx_dir, tx_dir):
                state = rx.state
                what = _feed(rx, slot, data)
                if what is not None:
                    cells.append((state, what))
            want = expected[f"counters_{end}"]
            got = rx.counters
            if all(getattr(got, key) == want.get(key) for key in _CHECKED):
                for state, what in cells:
                    name = f"{state.value}/{what.value}"
                    if cov.model.has(DL_RECEIVE, name):
                        cov.hit(DL_RECEIVE, name)
    except (KeyError, TypeError, ValueError, AttributeError, UALinkError):
        return  # a malformed case: its verification reports it; nothing to sample


__all__ = ["sample_receive"]
