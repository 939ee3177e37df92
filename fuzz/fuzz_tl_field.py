"""atheris harness: TL control fields — the decoder, and the TL engine that acts on them.

The first input byte picks the mode (as in ``_harness.py``):

* even — *raw*: the rest is one field for ``tl.fields.decode_field`` (its length
  from FTYPE); only a ``DecodeError`` may escape.
* odd — *structured*: the rest is a script of fields played by a hostile peer
  against an honest :class:`TransactionLayer` that has a read, writes (full,
  byte-enabled, message), atomics and a 4-beat read outstanding. Each script
  entry is a selector byte and the field's sector bytes: the low 3 bits pick the
  FTYPE (7: an unknown FTYPE, so the control half-flit cannot be decoded and the
  engine fails the link), the top bit asks for a *repaired* field — field-aware
  values: a known command with a consistent ``len`` / ``numbeats`` and an address
  in (or just out of) the engine's memory, a response naming an outstanding tag
  from the right source, reserved bits clear — so mutations reach the engine's
  rules instead of its first check. Bit 6 closes the control half-flit early.
  Every field also goes through ``decode_field``. The fields are framed into TL
  flits (data half-flits after their control half-flit, from the script's bytes)
  and received by the engine, which is polled between flits, so it answers
  requests, returns credits and sends queued work.

  In structured mode the engine must not raise at all (``receive`` / ``poll`` take
  anything a peer sends, ``specs/tl.md`` rule 6) and no operation may complete
  twice; anything else is a crash.
"""

from __future__ import annotations

import contextlib

import atheris
from _harness import RAW_ONLY, main

with atheris.instrument_imports():
    from ualink_ref.errors import DecodeError, UALinkError
    from ualink_ref.tl import Completion, TransactionLayer
    from ualink_ref.tl.config import TLConfig
    from ualink_ref.tl.credits import CreditConfig
    from ualink_ref.tl.fields import FORMATS, SECTORS, FType, decode_field, encode_field
    from ualink_ref.tl.flit import data_halves_of
    from ualink_ref.tl.limits import TLLimits
    from ualink_ref.tl.memory import Memory

DECODE = decode_field
ME, PEER = 5, 9  # accelerator IDs: the engine under test, the hostile peer
MAPPED = (0, 0x4000)  # the engine's memory (an access past it is DECODE_ERROR)
POISONED = 0x300  # 16 poisoned bytes here: reads touching them answer DATA_ERROR
_HALF = 32
_COMMANDS = (0x03, 0x28, 0x29, 0x2A, 0x30, 0x32)
#: Outstanding operations of the engine, in issue order (they get tags 0..5).
_OPS = ("read 64", "write 64", "write 8 with byte enables", "atomic fetch add 8",
        "read 256", "write message 4")


def _grant() -> bytes:
    """A TL flit granting the engine pool credits (so its requests can leave)."""
    fc = encode_field(FType.FLOW_CONTROL, {"req_cmd": 63, "rsp_cmd": 63, "req_data": 255,
                                           "rsp_data": 255})
    return fc + bytes(60)


def new_engine() -> tuple[TransactionLayer, int]:
    """An honest engine with every kind of operation outstanding; (engine, ops issued)."""
    memory = Memory([MAPPED], max_pages=4)
    memory.poison(POISONED, 16)
    tl = TransactionLayer(ME, memory, config=TLConfig(
        credits=CreditConfig((2, 2, 4, 4), (6, 6, 10, 10)),
        limits=TLLimits(max_responses=2, max_messages=1, max_credits=260)))
    tl.receive(_grant())
    tl.read(PEER, 0x100, 64)
    tl.write(PEER, 0x200, bytes(range(64)))
    tl.write(PEER, 0x240, bytes(8), byte_enable=0x0F)
    tl.atomic(PEER, 0x280, "add", 3)
    tl.read(PEER, 0x400, 256)
    tl.write(PEER, 0x500, b"msg!", message=True)
    for _ in range(16):  # send them: tags 0..5 in issue order
        if tl.poll() is None:
            break
    return tl, len(_OPS)


def _bits(ftype: int, raw: bytes) -> dict[str, int]:
    """Every field value of ``raw`` read as ``ftype``'s layout (reserved bits included)."""
    fmt = FORMATS[ftype]
    word = int.from_bytes(raw, "big")
    return {p.field.name: (word >> p.shift) & p.field.max_value for p in fmt.positions}


def repair(ftype: int, raw: bytes) -> bytes:
    """Field-aware values (module docstring): a field the engine's rules, not its first
    check, decide about. Mutated bits still choose among the meaningful variants."""
    v = _bits(ftype, raw)
    pick = v.get("tag", 0) ^ v.get("vchan", 0)
    for name in ("spare",):
        if name in v:
            v[name] = 0
    if ftype in (FType.REQUEST, FType.COMPRESSED_REQUEST):
        cmd = _COMMANDS[v["cmd"] % len(_COMMANDS)]
        v["cmd"] = cmd
        if cmd in (0x30, 0x32):  # atomics: one 4- or 8-byte operand, a known op
            v["attr"] = (v["attr"] >> 4) % 10 << 4
            v["len"] = 1 if v["len"] & 1 else 0
            v["numbeats"] = 0
        else:
            nbytes = 4 * (v["len"] + 1)
            v["numbeats"] = (nbytes - 1) // 64
        addr = 4 * (v["addr_lo"] if ftype == FType.COMPRESSED_REQUEST else v["addr"]) % 0x1000
        addr &= ~0xFF if v["len"] > 8 else ~0x7  # aligned; inside one 256-byte region
        if pick & 8:
            addr += MAPPED[1]  # just past the mapped memory: DECODE_ERROR
        elif pick & 16:
            addr = POISONED & ~0xFF  # the poisoned region: DATA_ERROR
        if ftype == FType.COMPRESSED_REQUEST:
            v["addr_lo"] = addr >> 2  # the field holds address bits 23..2
        else:
            v.update(addr=addr >> 2, asi=0 if pick & 3 else v["asi"],
                     src_acc=PEER, dst_acc=ME if pick & 7 else v["dst_acc"])
        v["tag"] %= 64
    elif ftype in (FType.RESPONSE, FType.COMPRESSED_RESPONSE_DATA,
                   FType.COMPRESSED_RESPONSE_NODATA):
        v["tag"] %= 8  # mostly outstanding tags (0..5), sometimes not
        if not pick & 4:  # a well-formed single response (bit 2: keep split/offset values)
            v["offset"], v["last"] = 0, 1
        if ftype == FType.RESPONSE:
            v["status"] %= 4
            v["src_acc"] = PEER if pick & 3 else v["src_acc"]
            v["dst_acc"] = ME if pick & 7 else v["dst_acc"]
    elif ftype in (FType.FLOW_CONTROL, FType.VC_FLOW_CONTROL):
        for name in ("req_cmd", "rsp_cmd", "req_data", "rsp_data"):
            v[name] %= 8  # small returns; over-grants stay possible through repetition
    v["ftype"] = ftype
    return FORMATS[ftype].pack(v)


def script_fields(script: bytes) -> list[tuple[bytes, bool]]:
    """The script's fields, each ``(bytes, ends its control half-flit)``."""
    out: list[tuple[bytes, bool]] = []
    i = 0
    while i < len(script) and len(out) < 24:
        sel = script[i]
        kind = sel & 7
        size = 4 * SECTORS[kind] if kind < 7 else 4
        raw = (script[i + 1 : i + 1 + size] + bytes(size))[:size]
        i += 1 + size
        if kind == 7:  # an unknown FTYPE (7..15): the control half cannot be decoded
            field = bytes([0x70 | (raw[0] & 0x8F)]) + raw[1:]
        elif sel & 0x80:
            field = repair(kind, raw)
        else:
            field = bytes([kind << 4 | (raw[0] & 0x0F)]) + raw[1:]
        out.append((field, bool(sel & 0x40)))
    return out


def frame(fields: list[tuple[bytes, bool]], filler: bytes) -> list[bytes]:
    """TL flits carrying ``fields``: control half-flits packed in order, each followed by
    the data half-flits its fields need (cut from ``filler``), padded to whole flits."""
    halves: list[bytes] = []
    control = b""
    owed = 0
    pos = 0

    def close() -> None:
        nonlocal control, owed, pos
        if not control:
            return
        halves.append(control + bytes(_HALF - len(control)))
        for _ in range(owed):
            chunk = filler[pos : pos + _HALF]
            pos += _HALF
            halves.append(chunk + bytes(_HALF - len(chunk)))
        control, owed = b"", 0

    for field, last in fields:
        if len(control) + len(field) > _HALF:
            close()
        control += field
        try:
            _, values = decode_field(field)
            owed += data_halves_of(values["ftype"], values)
        except UALinkError:
            pass  # undecodable or unknown command: the engine fails the link there
        if last:
            close()
    close()
    if len(halves) % 2:
        halves.append(bytes(_HALF))
    return [halves[i] + halves[i + 1] for i in range(0, len(halves), 2)]


def run_engine(script: bytes) -> None:
    """Play the script's fields against an honest engine (module docstring)."""
    fields = script_fields(script)
    for field, _ in fields:
        with contextlib.suppress(DecodeError):
            decode_field(field)
    tl, issued = new_engine()
    done: list[int] = []
    now = 0.0
    for flit in frame(fields, script[::-1]):
        now += 1
        done += [e.handle for e in tl.receive(flit, now) if isinstance(e, Completion)]
        for _ in range(2):
            tl.poll(now)
    for _ in range(32):
        if tl.poll(now) is None:
            break
    if len(done) != len(set(done)) or not set(done) <= set(range(issued)):
        raise AssertionError(f"operations completed twice or unknown: {done}")


#: Valid fields, one per FTYPE and the variants the engine treats apart (raw-mode seeds).
SEEDS = [
    encode_field(FType.FLOW_CONTROL, {}),
    encode_field(FType.FLOW_CONTROL, {"req_cmd": 1, "rsp_cmd": 2, "req_data": 3, "rsp_data": 4}),
    encode_field(FType.VC_FLOW_CONTROL, {"vchan": 2, "req_cmd": 1, "rsp_data": 5}),
    encode_field(FType.REQUEST, {"cmd": 0x03, "tag": 7, "len": 15, "addr": 0x40, "src_acc": PEER,
                                 "dst_acc": ME}),
    encode_field(FType.REQUEST, {"cmd": 0x28, "tag": 8, "len": 1, "addr": 0x80, "src_acc": PEER,
                                 "dst_acc": ME, "cload": 1, "cway": 2}),
    encode_field(FType.REQUEST, {"cmd": 0x30, "attr": 0x20, "len": 1, "addr": 0x60,
                                 "src_acc": PEER, "dst_acc": ME}),
    encode_field(FType.RESPONSE, {"tag": 0, "len": 0, "status": 0, "last": 1, "src_acc": PEER,
                                  "dst_acc": ME}),
    encode_field(FType.RESPONSE, {"tag": 4, "status": 3, "last": 1, "src_acc": PEER,
                                  "dst_acc": ME}),
    encode_field(FType.RESPONSE, {"tag": 1, "rd_wr": 1, "offset": 1, "last": 0,
                                  "src_acc": PEER, "dst_acc": ME}),
    encode_field(FType.COMPRESSED_REQUEST, {"cmd": 0x29, "tag": 9, "len": 15, "cway": 2,
                                            "addr_lo": 0x100}),
    encode_field(FType.COMPRESSED_RESPONSE_DATA, {"tag": 3, "last": 1}),
    encode_field(FType.COMPRESSED_RESPONSE_NODATA, {"tag": 2, "last": 1}),
]


def _entry(field: bytes, *, repaired: bool = True, last: bool = False) -> bytes:
    """One structured-script entry for a seed field."""
    return bytes([(field[0] >> 4) | (0x80 if repaired else 0) | (0x40 if last else 0)]) + field


#: Structured-mode seeds: scripts covering every FTYPE, each response kind against the
#: outstanding tags, a cache-loading request followed by its compressed form, poisoned
#: and unmapped reads, a split response, an over-grant and an undecodable half-flit.
SCRIPTS = [
    b"".join(_entry(f) for f in SEEDS),
    b"".join(_entry(f, repaired=False, last=True) for f in SEEDS),
    _entry(SEEDS[4]) + _entry(SEEDS[9]) + bytes(48),
    b"".join(_entry(encode_field(FType.RESPONSE, {"tag": t, "len": 3 if t == 4 else 0,
                                                  "rd_wr": int(t in (1, 2, 5)), "last": 1,
                                                  "src_acc": PEER, "dst_acc": ME}),
                    repaired=False, last=True) for t in range(6)),
    _entry(encode_field(FType.REQUEST, {"cmd": 0x03, "tag": 1, "len": 3, "addr": POISONED >> 2,
                                        "src_acc": PEER, "dst_acc": ME}), repaired=False)
    + _entry(encode_field(FType.REQUEST, {"cmd": 0x03, "tag": 2, "len": 3,
                                          "addr": MAPPED[1] >> 2, "src_acc": PEER,
                                          "dst_acc": ME}), repaired=False),
    b"".join(_entry(SEEDS[1], repaired=False) for _ in range(8)) + b"\x07\x7f\xff\xff\xff",
]
CORPUS = [b"\x01" + s for s in SCRIPTS]
#: Dictionary entries (added to the TL ones by ``make_corpus.py``): every seed field as a
#: repaired script entry, and the selector bytes.
DICT = {
    **{f"entry_{i}_ftype{f[0] >> 4}": _entry(f) for i, f in enumerate(SEEDS)},
    **{f"select_ftype{k}": bytes([0x80 | k]) for k in range(8)},
    "select_close_half": b"\x40",
}


def TestOneInput(data: bytes) -> None:
    """Raw: the decoder may raise only DecodeError. Structured: the engine never raises."""
    if data and data[0] & 1 and not RAW_ONLY:
        run_engine(data[1:])
        return
    with contextlib.suppress(DecodeError):
        decode_field(data[1:])


if __name__ == "__main__":
    main(TestOneInput)
