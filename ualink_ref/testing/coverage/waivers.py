"""Why the committed vectors leave a field, error or cross bin unhit (specs/coverage.md).

Point name -> bin -> reason. Rule waivers live beside the rules
(:mod:`~ualink_ref.testing.coverage.rules`). A waiver is a statement about what the
vector kinds *can* hold, checked against the committed ``vectors/``: the report
flags any waiver whose bin is hit after all, and a test keeps the committed
vectors at 100 % closure with no stale waiver.
"""

from __future__ import annotations

_CAPTURE_DECODE = ("only a decode input can hold it (the record encoder writes valid "
                   "headers only) and capture.json has no decode kind; difftest's capture "
                   "codec draws such headers")
_HEADER_CONST = ("the encoder always writes 16; any other value is a decode input and "
                 "capture.json has no decode kind")
_PAYLOAD = ("set by the record kind and FEC mode (640 bytes a DL flit, whole codewords); "
            "another value is a decode input and capture.json has no decode kind")
_ENGINE = ("raised by the TL / DL engines at a peer's or caller's fault; vector cases "
           "record completions, statuses and events, not exceptions")
_BASE = "a base class: vector cases record the concrete class a codec raises"
_RX_ONE_FLIT = ("unreachable in a retry_scenario: one flit arrives per slot, after the "
                "receiver's own sends, and an owed replay request is the first thing an end "
                "sends, so no flit arrives while a request is owed (batched steps reach it)")
_RX_RETRAIN = ("retry_scenario has no retrain or fault input; the retrain capture records "
               "the wire, not the receiver's inputs")

WAIVERS: dict[str, dict[str, str]] = {
    "field:capture_header.magic": {"unknown_enum": _CAPTURE_DECODE},
    "field:capture_header.version": {"unknown_enum": _CAPTURE_DECODE},
    "field:capture_header.header_length": {"zero": _HEADER_CONST, "one": _HEADER_CONST,
                                           "max": _HEADER_CONST},
    "field:capture_header.record_kind": {"unknown_enum": _CAPTURE_DECODE},
    "field:capture_header.direction": {"unknown_enum": _CAPTURE_DECODE},
    "field:capture_header.fec_mode": {"unknown_enum": _CAPTURE_DECODE},
    "field:capture_header.interleave": {"zero": _CAPTURE_DECODE, "max": _CAPTURE_DECODE},
    "field:capture_header.rsvd0": {"reserved_nonzero": _CAPTURE_DECODE},
    "field:capture_header.rsvd1": {"reserved_nonzero": _CAPTURE_DECODE},
    "field:capture_header.payload_length": {"zero": _PAYLOAD, "one": _PAYLOAD, "max": _PAYLOAD},
    "error:class": {
        "UALinkError": _BASE,
        "DecodeError": _BASE,
        "ProtocolError": _BASE,
        "EncodeError": "no vector kind records an encode error: encode kinds' inputs are "
                       "valid by construction",
        "ConfigError": "a configuration refused at construction; vector inputs build only "
                       "valid configurations",
        "CaptureFormatError": "capture.json has no decode kind (a malformed capture is a "
                              "decode input)",
        "VectorFormatError": "an unreadable vector file is reported by `vectors verify`, not "
                             "recorded in one",
        "FaultPlanError": "a fault plan that cannot be read is refused before a run; the "
                          "scenarios' plans are valid",
        "LinkStalledError": "the simulator's stall watchdog; no vector kind runs Simulation",
        "CaptureIncomplete": "the simulator's stall watchdog while recording; every capture "
                             "scenario completes",
        "TargetProtocolError": "an implementation under difftest breaking the line protocol; "
                               "not a model outcome",
        "TargetCrashed": "an implementation under difftest exiting or killed by a signal; "
                         "not a model outcome",
        "TargetTimeout": "an implementation under difftest not answering in time; not a "
                         "model outcome",
        "SequenceError": _ENGINE, "CreditError": _ENGINE, "TagError": _ENGINE,
        "MisroutedError": _ENGINE, "ResponseMismatchError": _ENGINE,
        "AddressCacheError": _ENGINE, "UnsupportedError": _ENGINE, "LinkFailedError": _ENGINE,
    },
    "cross:dl.receive": {
        "request_owed/accepted": _RX_ONE_FLIT, "request_owed/duplicate": _RX_ONE_FLIT,
        "request_owed/error": _RX_ONE_FLIT, "closed_request_owed/accepted": _RX_ONE_FLIT,
        "closed_request_owed/duplicate": _RX_ONE_FLIT,
        "closed_request_owed/error": _RX_ONE_FLIT,
        "closed_request_owed/request_sent": _RX_ONE_FLIT,
        **{f"{state}/{what}": _RX_RETRAIN
           for state in ("in_sequence", "request_owed", "request_sent", "closed_request_owed")
           for what in ("retrained", "discarded")},
    },
}



def waivers_markdown() -> str:
    """The waiver table of specs/coverage.md: point, bins, reason (bins sharing a reason
    in one row)."""
    lines = ["| Point | Bins | Why the vectors do not hit them |", "|---|---|---|"]
    for point, bins in WAIVERS.items():
        by_reason: dict[str, list[str]] = {}
        for name, reason in bins.items():
            by_reason.setdefault(reason, []).append(name)
        for reason, names in by_reason.items():
            shown = ", ".join(f"`{n}`" for n in names)
            lines.append(f"| `{point}` | {shown} | {reason} |")
    return "\n".join(lines) + "\n"


__all__ = ["WAIVERS", "waivers_markdown"]
