"""A cover bin for every numbered rule in specs/ (specs/coverage.md "Rules").

Each spec file with numbered rules is one point, ``rule:<file>``, with a bin per
rule id (``rule:dl.md`` has ``1`` .. ``11``, ``L1`` .. ``L10``, ``F1`` .. ``F5``). A
rule is hit when a sample shows its *fact* (:data:`FACTS`: what in a vector case
evidences the rule, in words); a rule whose effect no vector kind records has no
fact and a waiver saying so. ``tests/testing/test_coverage_rules.py`` checks that
:data:`RULES` lists exactly the numbered rules the specs hold, and
:func:`rules_markdown` renders the table specs/coverage.md carries.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ualink_ref.testing.coverage.model import Coverage, CoverPoint

#: Fact -> what in a sample evidences it (rendered into specs/coverage.md).
FACTS: dict[str, str] = {
    "dl.seq_511": "a DL flit header with op explicit or replay and `flit_seq` 511 "
                  "(the last number before the wrap)",
    "dl.gap_dropped": "a `retry_scenario` whose receiver counted a sequence error and "
                      "still delivered every TL flit in order (`delivered_*_ok`)",
    "dl.replay_on_request": "a `ReplayStarted(... reason='request')` event",
    "dl.implicit_seq": "a DL flit with op `ack` and payload 1 (implicit sequence number)",
    "dl.one_request": "a `retry_scenario` with a CRC error and exactly one replay "
                      "request sent by that receiver",
    "dl.replay_timeout": "a `ReplayStarted(... reason='timeout')` event",
    "dl.request_before_data": "a `retry_scenario` end that has TL flits to send and puts "
                              "a replay request on the wire (rule 7's first priority)",
    "dl.ack_only": "an ack-only flit (op `ack`, payload 0) on a `retry_scenario` wire",
    "dl.message_in_flit": "a DL flit with a segment header `msg` = 1 (a message word)",
    "dl.pacing": "a capture `scenario` whose DL messages include a TLRateNotification",
    "dl.retrained": "a capture `scenario` link change from `training` to `up`",
    "dl.link_states": "a capture `scenario` with link changes",
    "dl.retrain_needed": "a capture `scenario` link change with reason `retrain needed`",
    "dl.training_negotiation": "a capture `scenario` that enters `training` and carries "
                               "ChannelNegotiation messages",
    "dl.link_fault": "a capture `scenario` link change to `fault`",
    "dl.idle_probe": "a capture `scenario` link change to `idle`",
    "dl.uart": "a capture `scenario` with `uart_received` bytes",
    "dl.vendor_or_unknown_message": "a VendorMessage or UnknownMessage in a capture "
                                    "`scenario`, or a `message_decode` answered `unknown`",
    "fault.down": "a capture `scenario` run with fault plan `down S1 S2`",
    "fault.poison": "a capture `scenario` run with fault plan `poison A`",
    "fault.stop_tag": "a capture `scenario` run with fault plan `stop-tag T`",
    "tl.spare_rejected": "a `field_decode` of a response with non-zero `spare` answered "
                         "`ReservedBitsError` (the check E3 applies first)",
    "tl.undecodable_field": "a `field_decode` of an unknown FTYPE answered `FieldRangeError` "
                            "(the field E7 makes fatal to the framing)",
    "tl.split": "an `error_path` whose target splits (`split` always or random) and a "
                "response piece with `last` = 0",
    "tl.split_random": "an `error_path` with `split` = `random` (seeded)",
    "tl.pieces_out_of_order": "an `error_path` whose responses for one tag arrive with "
                              "offsets not in ascending order",
    "tl.write_not_split": "an `error_path` with `split` = `always` whose write is answered "
                          "by one response (offset 0, last 1)",
    "tl.split_completes_once": "an `error_path` with a split read answered in more than "
                               "one piece and one completion per op",
    "tl.poisoned_read": "an `error_path` with poisoned bytes and a completion with a "
                        "non-zero `poisoned` beat mask",
    "tl.poisoned_write_data": "an `error_path` op carrying `poison` (a beat mask or a "
                              "poisoned atomic operand)",
    "tl.poison_pieces": "an `error_path` whose responses for one tag include both an OKAY "
                        "and a DATA_ERROR piece",
    "tl.poison_stored": "an `error_path` with a poisoned write and `poisoned_after` bytes",
    "tl.atomic_poisoned": "an `error_path` atomic completed DATA_ERROR",
    "tl.timeout_armed": "an `error_path` with `timeout_slots` set",
    "tl.timeout": "an `error_path` completion with status TIMEOUT",
    "tl.late_response": "an `error_path` with `late_responses`",
    "tl.quarantine": "an `error_path` whose counters show quarantined tags",
    "tl.stop_tag": "an `error_path` with `stop_tags`",
    "switch.path": "a `switch_path` case (every port a PHY + DL link end)",
    "switch.unroutable": "a `switch_path` completion UNSUPPORTED_REQUEST",
    "switch.credits": "a `switch_path` port carrying a non-NOP flow-control field",
    "switch.shared_egress": "a `switch_path` port whose egress carries both requests and "
                            "responses",
    "switch.latency": "a `switch_path` with `switch_slots` > 0",
    "switch.uncompressed": "a `switch_path` whose ports carry requests, none compressed",
}

_COLLECTIVE = ("no vector kind runs a collective: collectives are checked against "
               "their sequential reduction by the collectives tests, not by vectors")
_POD = ("no vector kind runs a pod workload or its report (switch_path drives a fixed "
        "3-port switch with scripted ops)")
_FAST = ("a rule of the fast fidelity's timing model (no bytes, so nothing a vector case "
         "records): held by tests/fast and the agreement table of specs/fast.md")
_LIMITS = "a bound on reading a vector directory, not a behaviour a vector case records"
_EXPORT = ("the memh export layout of a vectors directory (tests/testing/test_export.py "
           "checks it against the JSON), not a behaviour a vector case records")
_DISSECT = ("a rule of the dissector's output; no vector kind records dissect output (the "
            "captures are its input)")
_HOSTILE_PORT = ("needs an accelerator that breaks the rules at a switch port; switch_path's "
                 "accelerators are the model, which never does")
_HOSTILE = ("needs a peer that breaks the TL rules; every vector's peer is the model, "
            "which never does")


@dataclass(frozen=True)
class Rule:
    """One numbered rule: where it is, the fact that evidences it, or why none can."""

    spec: str
    id: str
    fact: str = ""
    waiver: str = ""


def _rules(spec: str, *entries: tuple[str, str, str]) -> list[Rule]:
    return [Rule(spec, rid, fact, waiver) for rid, fact, waiver in entries]


#: Every numbered rule of specs/, in spec order.
RULES: tuple[Rule, ...] = tuple(
    _rules("README.md",
           ("F1", "", "no vector runs the ErrorBursts channel (the fec_codewords scenario "
                      "uses independent bit errors)"),
           ("F2", "fault.down", ""),
           ("F3", "", "how channels are chained and given the slot: no vector records it"),
           ("S1", "", "the Simulation stall watchdog: no vector kind runs Simulation"),
           ("S2", "", "the Simulation stall watchdog: no vector kind runs Simulation"))
    + _rules("capture.md",
             ("C1", "", "reader limits on capture files: " + _LIMITS),
             *((d, "", _DISSECT) for d in ("D1", "D2", "D3", "D4", "D5", "D6", "D6a", "D7",
                                           "D8")))
    + _rules("collectives.md",
             *((c, "", _COLLECTIVE) for c in ("C1", "C2", "C3", "C4", "C5", "C6", "C7", "A1",
                                              "A2", "A3", "A4", "A5", "A6", "A7", "A8", "M1",
                                              "M2", "M3", "M4", "M5")))
    + _rules("difftest.md",
             *((x, "", _EXPORT) for x in ("X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8",
                                          "X9", "X10")))
    + _rules("dl.md",
             ("1", "dl.seq_511", ""), ("2", "dl.gap_dropped", ""),
             ("3", "dl.replay_on_request", ""), ("4", "dl.implicit_seq", ""),
             ("5", "dl.one_request", ""), ("6", "dl.replay_timeout", ""),
             ("7", "dl.request_before_data", ""), ("8", "dl.ack_only", ""),
             ("9", "dl.message_in_flit", ""), ("10", "dl.pacing", ""),
             ("11", "dl.retrained", ""),
             ("L1", "dl.link_states", ""), ("L2", "dl.retrain_needed", ""),
             ("L3", "dl.training_negotiation", ""), ("L4", "dl.retrained", ""),
             ("L5", "dl.link_fault", "no capture scenario exhausts max_retrains: the retrain "
                                     "scenario recovers on the first training"),
             ("L6", "", "which end was up when it answered an online request is not "
                        "recorded by any vector kind (a capture holds the flits only)"),
             ("L7", "dl.pacing", ""), ("L8", "dl.uart", ""),
             ("L9", "dl.vendor_or_unknown_message", ""),
             ("L10", "dl.idle_probe", "no capture scenario leaves a link idle with the TL "
                                      "waiting (every scenario ends when its ops complete)"),
             ("L11", "", "a port faulted by its owner (a switch's H7) is a pod event: no "
                         "vector kind runs a switch with a fault"),
             ("F1", "", "no capture scenario runs fault plan `corrupt` (retry_scenario's "
                        "`corrupt` is a channel script, not the plan entry)"),
             ("F2", "", "no capture scenario runs fault plan `corrupt-rate`"),
             ("F3", "", "no capture scenario runs fault plan `drop-ack`"),
             ("F4", "fault.down", ""), ("F5", "fault.poison", ""))
    + _rules("fabric.md",
             ("S1", "switch.path", ""), ("S2", "switch.unroutable", ""),
             ("S3", "", "pods run compress=False (F5), so no compressed request reaches a "
                        "switch in any vector"),
             ("S4", "switch.credits", ""), ("S5", "switch.shared_egress", ""),
             ("S6", "switch.shared_egress", ""), ("S7", "switch.latency", ""),
             ("S8", "", "switch_path runs the switch without PFC"),
             ("S9", "", "switch_path declares no multicast group"),
             *((h, "", _HOSTILE_PORT) for h in ("H1", "H2", "H3", "H4", "H5", "H6", "H7")),
             ("H8", "", "a bound on what a switch port holds: no vector kind records it"),
             ("F1", "switch.path", ""),
             ("F2", "", "switch_path builds one plane"),
             ("F3", "switch.latency", ""),
             ("F4", "", _POD), ("F5", "switch.uncompressed", ""),
             ("F6", "", "switch_path runs the switch without PFC"),
             ("F9", "", "switch_path has no lanes input: every vector link is x1"),
             ("F10", "", "switch_path declares no multicast group"),
             ("F11", "", "switch_path has no links_down input"),
             ("F13", "", "switch_path has no links_down input"),
             ("F12", "", "switch_path has no memory_pages input (the default bound)"),
             ("F14", "", "every vector kind taps its network (it records wire bytes), "
                         "which keeps the line code: F14 is held by "
                         "tests/net/test_identity_line_code.py"),
             ("F15", "", "idle ports are polled as before: nothing for a vector to record"),
             ("F7", "", "the drained pod's leak check is not a vector output"),
             *((w, "", _POD) for w in ("W1", "W2", "W3", "W5", "W4", "R1", "R2", "R3", "R4",
                                       "R5", "R6")))
    + _rules("fast.md", *((q, "", _FAST) for q in ("Q1", "Q2", "Q3", "Q4", "Q5")))
    + _rules("fast-protocols.md",
             *((k, "", _FAST) for k in ("K1", "K2", "K3", "K4", "K5", "K6", "K7")))
    + _rules("tl.md",
             ("E1", "", _HOSTILE), ("E2", "", _HOSTILE), ("E3", "tl.spare_rejected", ""),
             ("E4", "", _HOSTILE), ("E5", "", _HOSTILE), ("E6", "", _HOSTILE),
             ("E7", "tl.undecodable_field", ""),
             ("B1", "", "reaching 1,024 queued responses needs a peer that withholds "
                        "response credits for that long: no vector kind does"),
             ("B2", "", "no vector fills 2^18 memory pages"),
             ("B3", "", "no vector keeps 1,024 Write Messages"),
             ("B4", "", "no vector grants 65,536 credits"),
             ("S1", "tl.split", ""), ("S2", "tl.split_random", ""),
             ("S3", "tl.pieces_out_of_order", ""),
             ("S4", "", "the range / overlap check only fires on a bad piece, and every "
                        "piece in the vectors comes from the model's target"),
             ("S5", "tl.write_not_split", ""),
             ("S6", "tl.split", ""), ("S7", "tl.split_completes_once", ""),
             ("P1", "tl.poisoned_read", ""), ("P2", "tl.poisoned_write_data", ""),
             ("P3", "tl.poison_pieces", ""), ("P4", "tl.poison_stored", ""),
             ("P5", "tl.atomic_poisoned", ""), ("P6", "fault.poison", ""),
             ("T1", "tl.timeout_armed", ""), ("T2", "tl.timeout", ""),
             ("T3", "tl.late_response", ""), ("T4", "tl.quarantine", ""),
             ("T5", "tl.stop_tag", ""),
             ("T6", "", "the Simulation stall watchdog: no vector kind runs Simulation"))
    + _rules("vectors.md", *((v, "", _LIMITS) for v in ("V1", "V2", "V3", "V4")))
)


def _check() -> dict[str, tuple[Rule, ...]]:
    by_fact: dict[str, list[Rule]] = defaultdict(list)
    for rule in RULES:
        if rule.fact and rule.fact not in FACTS:
            raise ValueError(f"rule {rule.spec} {rule.id}: unknown fact {rule.fact!r}")
        if not rule.fact and not rule.waiver:
            raise ValueError(f"rule {rule.spec} {rule.id}: neither a fact nor a waiver")
        if rule.fact:
            by_fact[rule.fact].append(rule)
    return {fact: tuple(rules) for fact, rules in by_fact.items()}


_BY_FACT = _check()


def rule_points() -> list[CoverPoint]:
    """One point per spec file: a bin per rule id, waivers from :data:`RULES`."""
    specs: dict[str, list[Rule]] = defaultdict(list)
    for rule in RULES:
        specs[rule.spec].append(rule)
    return [CoverPoint(f"rule:{spec}", "rule", tuple(r.id for r in rules),
                       f"numbered rules of specs/{spec}",
                       {r.id: r.waiver for r in rules if r.waiver})
            for spec, rules in specs.items()]


def fact(cov: Coverage, name: str) -> None:
    """Record that a sample shows fact ``name``: hits every rule bound to it."""
    if name not in FACTS:
        raise KeyError(f"no coverage fact {name!r}")
    for rule in _BY_FACT.get(name, ()):
        cov.hit(f"rule:{rule.spec}", rule.id)


def rules_markdown() -> str:
    """The rule table of specs/coverage.md: spec, rule, evidence, waiver."""
    lines = ["| Spec | Rule | Hit by | Waiver (why the vectors may not show it) |",
             "|---|---|---|---|"]
    for r in RULES:
        evidence = FACTS[r.fact] if r.fact else "—"
        lines.append(f"| {r.spec} | {r.id} | {evidence} | {r.waiver or '—'} |")
    return "\n".join(lines) + "\n"


__all__ = ["FACTS", "RULES", "Rule", "fact", "rule_points", "rules_markdown"]
