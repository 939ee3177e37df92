-- ---------------------------------------------------------------------------
-- Hand-written part (ualink_ref/wireshark/core.lua). Everything above this line
-- is generated from the declarations; below are the parts that are not
-- declarations: pseudo-header check and record dispatch, the DL flit checks
-- (the rules of ualink_ref.dl.flit), the segment walk and TL-flit starts, the
-- CRC-32, the per-direction receiver that reassembles TL flits across DL flits
-- (the rules of ualink_ref.capture.dissect), the TL half-flit walk (ualink_ref.tl.flit),
-- expert infos and the Info column. Lua 5.2+ with Wireshark's `bit` library.
-- ---------------------------------------------------------------------------

local band, bxor, rshift = bit.band, bit.bxor, bit.rshift

-- Fields that are not part of a declared format.
local X = {
  crc = pf(ProtoField.uint32("ualink.dl.crc", "crc", base.HEX, nil, nil,
    "CRC-32 (IEEE 802.3) of bytes 0..635, stored big-endian")),
  crc_computed = pf(ProtoField.uint32("ualink.dl.crc.computed", "computed crc", base.HEX,
    nil, nil, "CRC-32 computed by the dissector")),
  crc_status = pf(ProtoField.uint8("ualink.dl.crc_status", "crc status", base.DEC,
    {[0] = "Bad", [1] = "Good", [2] = "Unverified"}, nil, "Wireshark checksum status")),
  tl_start = pf(ProtoField.uint16("ualink.dl.tl_start", "TL flit starts at", base.DEC, nil, nil,
    "byte offset in the DL flit where a TL flit begins")),
  tl_bytes = pf(ProtoField.bytes("ualink.dl.tl_bytes", "TL bytes")),
  fill = pf(ProtoField.bytes("ualink.dl.fill", "fill", base.NONE, "zero fill after the TL bytes")),
  rx_status = pf(ProtoField.string("ualink.dl.rx_status", "receiver",
    "accepted, duplicate, gap or unsynchronised (as `ualink-ref dissect`)")),
  seq = pf(ProtoField.uint16("ualink.dl.seq", "sequence number", base.DEC, nil, nil,
    "sequence number of a data flit (explicit, or implicit and resolved)")),
  replayed = pf(ProtoField.bool("ualink.dl.replayed", "replayed")),
  note = pf(ProtoField.string("ualink.dl.note", "note")),
  codewords = pf(ProtoField.bytes("ualink.cap.codewords", "FEC codewords")),
  tl_flit = pf(ProtoField.bytes("ualink.tl.flit", "TL flit")),
  tl_pending = pf(ProtoField.uint8("ualink.tl.pending", "data half-flits owed before", base.DEC)),
  half = pf(ProtoField.string("ualink.tl.half", "half-flit kind")),
  data = pf(ProtoField.bytes("ualink.tl.data", "data half-flit")),
  nop_sectors = pf(ProtoField.uint8("ualink.tl.nop_sectors", "NOP sectors", base.DEC)),
  byte_addr = pf(ProtoField.uint64("ualink.tl.req.byte_addr", "byte address", base.HEX, nil, nil,
    "request address in bytes (addr << 2)")),
  byte_addr_lo = pf(ProtoField.uint32("ualink.tl.creq.byte_addr_lo", "byte address, low bits",
    base.HEX, nil, nil, "address bits 23..0 in bytes (addr_lo << 2)")),
}

local EX = {
  crc = ProtoExpert.new("ualink.dl.crc_bad", "DL flit CRC mismatch", expert.group.CHECKSUM,
    expert.severity.ERROR),
  malformed = ProtoExpert.new("ualink.dl.malformed", "DL flit malformed (the model rejects it)",
    expert.group.MALFORMED, expert.severity.ERROR),
  record = ProtoExpert.new("ualink.cap.malformed", "Capture record malformed",
    expert.group.MALFORMED, expert.severity.ERROR),
  reserved = ProtoExpert.new("ualink.reserved", "Reserved bits set", expert.group.PROTOCOL,
    expert.severity.WARN),
  enum = ProtoExpert.new("ualink.unknown_value", "Value not in the field's enum",
    expert.group.PROTOCOL, expert.severity.WARN),
  tl = ProtoExpert.new("ualink.tl.undecodable", "TL flit not decodable", expert.group.MALFORMED,
    expert.severity.WARN),
  uncorrectable = ProtoExpert.new("ualink.cap.fec_uncorrectable",
    "FEC decoder flagged a codeword uncorrectable", expert.group.CHECKSUM, expert.severity.WARN),
  rx = ProtoExpert.new("ualink.dl.rx_note", "Receiver note", expert.group.SEQUENCE,
    expert.severity.NOTE),
}

ualink.fields = FIELDS
ualink.experts = {EX.crc, EX.malformed, EX.record, EX.reserved, EX.enum, EX.tl,
  EX.uncorrectable, EX.rx}

-- -- helpers -----------------------------------------------------------------

local CRC_TABLE = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if band(c, 1) == 1 then c = bxor(rshift(c, 1), 0xEDB88320) else c = rshift(c, 1) end
  end
  CRC_TABLE[i] = c
end

-- IEEE 802.3 CRC-32 (reflected, init and final XOR all ones) of a Lua string.
local function crc32(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do
    c = bxor(CRC_TABLE[band(bxor(c, s:byte(i)), 0xFF)], rshift(c, 8))
  end
  c = bxor(c, 0xFFFFFFFF)
  if c < 0 then c = c + 4294967296 end
  return c
end

-- Value of a field (not `wide`) read from a Lua string, the format starting at `base`.
local function str_field(s, base, f)
  local v = 0
  for i = 1, f.len do v = v * 256 + s:byte(base + f.off + i) end
  local shift = 8 * f.len - f.bit - f.width
  return math.floor(v / 2 ^ shift) % 2 ^ f.width
end

-- Every narrow field of `fmt` in `s` at byte `base`, and the first broken rule (or nil).
local function str_values(s, base, fmt)
  local vals, problem = {}, nil
  for _, f in ipairs(fmt.fields) do
    if not f.wide then
      local v = str_field(s, base, f)
      vals[f.name] = v
      if problem == nil and f.reserved and v ~= 0 and fmt.check_reserved then
        problem = fmt.name .. "." .. f.name .. ": reserved bits set (" .. v .. ")"
      elseif problem == nil and f.strict and f.enum and f.enum[v] == nil then
        problem = fmt.name .. "." .. f.name .. ": unknown value " .. v
      end
    end
  end
  return vals, problem
end

-- The field record called `name` in `fmt`.
local function field_of(fmt, name)
  for _, f in ipairs(fmt.fields) do
    if f.name == name then return f end
  end
  error("no field " .. name .. " in " .. fmt.name)
end

local function is_zero(v)
  return tostring(v) == "0"
end

-- Add every field of `fmt` (at byte `base` of `tvb`) under a new subtree; expert
-- warnings for non-zero reserved fields and values outside an enum.
local function add_format(tree, tvb, base, fmt, label, span)
  local sub = tree:add(ualink, tvb(base, span or fmt.bytes), label or fmt.name)
  local vals = {}
  for _, f in ipairs(fmt.fields) do
    local r = tvb(base + f.off, f.len)
    local item, v
    if f.wide or f.width > 32 then
      local shift = 8 * f.len - f.bit - f.width
      v = r:uint64():lshift(64 - f.width - shift):rshift(64 - f.width)
      item = f.wide and sub:add(f.pf, r, v) or sub:add(f.pf, r)
    else
      v = r:bitfield(f.bit, f.width)
      item = sub:add(f.pf, r)
    end
    vals[f.name] = v
    if f.reserved and not is_zero(v) then
      item:add_proto_expert_info(EX.reserved, fmt.name .. "." .. f.name .. " = " ..
        tostring(v) .. ": reserved, must be zero")
    end
    if f.enum and f.enum[v] == nil then
      item:add_proto_expert_info(EX.enum, fmt.name .. "." .. f.name .. " = " .. tostring(v) ..
        ": not a known value")
    end
  end
  return vals, sub
end

local function is_command(op)
  return op == C.op.ack or op == C.op.replay_request
end

local function header_format(op)
  return is_command(op) and FMT["dl_command_header"] or FMT["dl_explicit_header"]
end

-- -- DL flit: the checks of ualink_ref.dl.flit (DLFlit.decode) -----------------

-- The per-segment layout a continuous TL stream of tl_len bytes gives (segment_layout).
local function segment_layout(tl_len, first, msgs)
  local out, rel = {}, 0
  for k = 1, #C.segment_lengths do
    local body = C.segment_lengths[k] - C.message_bytes * msgs[k]
    local n = math.min(math.max(tl_len - rel, 0), body)
    if n == 0 then
      out[k] = {offset = 0, starts = 0, n = 0}
    else
      local nb = first
      if rel > first then nb = first + math.ceil((rel - first) / 64) * 64 end
      local starts = 0
      if nb < rel + n then starts = math.floor((rel + n - 1 - nb) / 64) + 1 end
      out[k] = {offset = (nb - rel) / 4, starts = starts, n = n}
    end
    rel = rel + n
  end
  return out
end

-- Why these header values cannot form a header (header_problem), or nil.
local function header_problem(op, h, payload)
  local flit_seq, ack, lo = h.flit_seq or 0, h.ack_req_seq or 0, h.flit_seq_lo or 0
  if is_command(op) then
    if not payload and lo ~= 0 then return "flit_seq_lo must be 0 without payload" end
    if op == C.op.replay_request and ack == 0 then
      return "a replay request names a sequence number 1..511"
    end
  else
    if payload ~= (flit_seq ~= 0) then
      return "flit_seq is 1..511 exactly when the flit carries TL bytes"
    end
    if op == C.op.replay and not payload then return "a replay flit carries TL bytes" end
  end
  return nil
end

-- Parse the 640 bytes `s` of a DL flit: CRC, header, segments, TL bytes. Returns a
-- table; `problem` is set when the model rejects the flit (`crc_bad` for the CRC).
local function parse_flit(s)
  local p = {stored = 0, computed = 0, msgs = {}, segs = {}, starts = {}, words = {}}
  for i = 1, 4 do p.stored = p.stored * 256 + s:byte(C.crc_coverage + i) end
  p.computed = crc32(s:sub(1, C.crc_coverage))
  if p.stored ~= p.computed then
    p.crc_bad = true
    p.problem = string.format("CRC error (stored 0x%08x, computed 0x%08x)", p.stored, p.computed)
    return p
  end
  p.op = rshift(s:byte(1), 5)
  local h, problem = str_values(s, 0, header_format(p.op))
  p.h = h
  if problem then p.problem = problem; return p end
  local tl, nmsg = {}, 0
  for k = 1, #C.segment_lengths do
    local hdr_off, body_off = C.segment_offsets[k][1], C.segment_offsets[k][2]
    local sh, sproblem = str_values(s, hdr_off, FMT["dl_segment_header"])
    if sproblem then p.problem = "segment" .. (k - 1) .. ": " .. sproblem; return p end
    local pos, body = body_off, C.segment_lengths[k]
    p.msgs[k] = sh.msg
    if sh.msg == 1 then
      local w = 0
      for i = 1, 4 do w = w * 256 + s:byte(pos + i) end
      p.words[k] = w
      nmsg = nmsg + 1
      pos = pos + C.message_bytes
      body = body - C.message_bytes
    end
    local bounds = {}
    for i = 0, 2 do
      local b = 4 * sh.tl_offset + 64 * i
      if b < body then bounds[#bounds + 1] = b end
    end
    if sh.tl_starts > #bounds then
      p.problem = "segment" .. (k - 1) .. ".tl_starts " .. sh.tl_starts .. ": only " ..
        #bounds .. " TL-flit boundaries fit"
      return p
    end
    local n = body
    if sh.tl_starts < #bounds then n = bounds[sh.tl_starts + 1] end
    if s:sub(pos + n + 1, pos + body):find("[^%z]") then
      p.problem = "segment" .. (k - 1) .. ".fill: fill bytes must be zero"
      return p
    end
    for i = 0, sh.tl_starts - 1 do
      p.starts[#p.starts + 1] = pos + 4 * sh.tl_offset + 64 * i
    end
    p.segs[k] = {offset = sh.tl_offset, starts = sh.tl_starts, n = n, pos = pos, body = body}
    tl[#tl + 1] = s:sub(pos + 1, pos + n)
  end
  p.tl = table.concat(tl)
  p.first = 4 * p.segs[1].offset
  local cap = 628 - C.message_bytes * nmsg
  if #p.tl == 0 and p.first ~= 0 then
    p.problem = "a flit without TL bytes has first_tl_start 0"
    return p
  end
  if #p.tl > 0 and #p.tl < cap and (#p.tl - p.first) % C.tl_flit_bytes ~= 0 then
    p.problem = "TL bytes end at " .. #p.tl .. ", not at a TL-flit boundary"
    return p
  end
  for k, want in ipairs(segment_layout(#p.tl, p.first, p.msgs)) do
    local got = p.segs[k]
    if want.offset ~= got.offset or want.starts ~= got.starts or want.n ~= got.n then
      p.problem = "segment" .. (k - 1) .. ": inconsistent with a continuous TL stream"
      return p
    end
  end
  p.payload = #p.tl > 0
  if h.payload ~= (p.payload and 1 or 0) then
    p.problem = "payload bit disagrees with the segment headers"
    return p
  end
  p.problem = header_problem(p.op, h, p.payload)
  return p
end

-- -- TL flits: the half-flit walk of ualink_ref.tl.flit ----------------------

-- Data half-flits that follow a control field (data_halves_of), or nil and a reason.
local function data_halves(ftype, v)
  if ftype == C.ftype.request or ftype == C.ftype.compressed_request then
    local be = CMD_DATA[v.cmd]
    if be == nil then return nil, "unknown command " .. v.cmd .. ": data length unknown" end
    if be < 0 then return 0 end
    return be + 2 * (v.numbeats + 1)
  end
  if ftype == C.ftype.response then
    if v.rd_wr == 0 and v.status == C.status_okay then return 2 * (v.len + 1) end
    return 0
  end
  if ftype == C.ftype.compressed_response_data then return 2 * (v.len + 1) end
  return 0
end

-- Dissect a 64-byte TL flit string given the data half-flits owed: {halves, pending_after},
-- or nil and the reason the model gives up on it.
local function dissect_tl(chunk, pending)
  local halves = {}
  for i = 0, 1 do
    local base = i * C.half_bytes
    if pending > 0 then
      halves[#halves + 1] = {kind = "data", base = base}
      pending = pending - 1
    else
      local fields, sector, owed = {}, 0, 0
      while sector < C.sectors_per_half do
        local start = base + sector * C.sector_bytes
        local ftype = rshift(chunk:byte(start + 1), 4)
        local size = TL_SECTORS[ftype]
        if size == nil then
          return nil, "unknown TL field type " .. ftype .. " at sector " .. sector
        end
        if sector + size > C.sectors_per_half then
          return nil, TL_FORMATS[ftype].name .. " at sector " .. sector ..
            " straddles the half-flit"
        end
        local fmt = TL_FORMATS[ftype]
        local v, problem = str_values(chunk, start, fmt)
        if problem then return nil, problem end
        local d, why = data_halves(ftype, v)
        if d == nil then return nil, why end
        local nop = ftype == C.ftype.flow_control
        for name, value in pairs(v) do
          if name ~= "ftype" and value ~= 0 then nop = false end
        end
        fields[#fields + 1] = {sector = sector, fmt = fmt, values = v, nop = nop, start = start}
        owed = owed + d
        sector = sector + size
      end
      halves[#halves + 1] = {kind = "control", base = base, fields = fields}
      pending = owed
    end
  end
  return {halves = halves, pending_after = pending}
end

-- -- the receiver of one direction: the rules of ualink_ref.capture.dissect ------------

local rx = {}       -- direction -> receiver state
local results = {}  -- frame number -> what the receiver made of the frame

local function new_rx()
  return {expected = nil, partial = "", pending = 0, recent = {}, data_flits = 0,
          lossy = false, unplaced = 0, guessed = false}
end

local function nxt(seq) return seq % C.seq_max + 1 end

local function seen(st, seq)
  local when = st.recent[seq]
  return when ~= nil and st.data_flits - when <= C.replay_memory
end

local function remember(st, seq)
  st.recent[seq] = st.data_flits
  st.data_flits = st.data_flits + 1
end

-- Feed one parsed flit to the receiver `st`; returns the frame's result.
local function receive(st, p)
  if p.problem then
    st.lossy = true
    return {status = "", notes = {}, tls = {}}
  end
  if not p.payload then return {status = "", notes = {}, tls = {}} end
  local notes, tl, seq = {}, p.tl, nil
  if is_command(p.op) then
    local lo = p.h.flit_seq_lo
    if st.expected == nil then
      if st.unplaced == 0 and not st.lossy and lo == 1 and p.first == 0 then
        st.expected = 1
        notes[#notes + 1] = "implicit seq taken as 1: capture starts at link start"
      elseif not st.lossy then
        st.expected = (lo ~= 0) and lo or 8
        st.guessed = true
        st.partial, st.pending = "", 0
        tl = tl:sub(p.first + 1)
        notes[#notes + 1] = "synchronised on an implicit header: sequence numbers unknown"
      else
        st.unplaced = st.unplaced + 1
        return {status = "unsynchronised", tls = {},
                notes = {"implicit sequence number before synchronisation"}}
      end
    end
    if lo ~= band(st.expected, 7) then
      local s = st.expected
      while band(s, 7) ~= lo do s = nxt(s) end
      local replayed = seen(st, s)
      remember(st, s)
      return {status = "gap", seq = s, replayed = replayed, tls = {},
              notes = {"expected seq " .. st.expected}}
    end
    seq = st.expected
  else
    seq = p.h.flit_seq
    local replayed = p.op == C.op.replay or seen(st, seq)
    if st.expected == nil then
      if seq ~= 1 and p.op ~= C.op.replay and st.lossy then
        st.unplaced = st.unplaced + 1
        return {status = "unsynchronised", seq = seq, tls = {},
                notes = {"waiting for sequence 1 or a replay after a lost flit"}}
      end
      st.expected = seq
      st.partial, st.pending = "", 0
      if p.first ~= 0 then
        notes[#notes + 1] = "synchronised: the first " .. p.first ..
          " TL bytes finish a TL flit begun before the capture"
        tl = tl:sub(p.first + 1)
      end
    elseif st.guessed and band(seq, 7) == band(st.expected, 7) then
      st.guessed = false
      st.expected = seq
    elseif seq ~= st.expected then
      remember(st, seq)
      if (seq - st.expected) % C.seq_max >= C.replay_memory then
        return {status = "duplicate", seq = seq, replayed = replayed, tls = {},
                notes = {"already received"}}
      end
      return {status = "gap", seq = seq, replayed = replayed, tls = {},
              notes = {"expected seq " .. st.expected}}
    end
  end
  local replayed = p.op == C.op.replay or seen(st, seq)
  if #notes == 0 and p.first ~= (-#st.partial) % C.tl_flit_bytes then
    notes[#notes + 1] = "TL stream phase mismatch (first_tl_start " .. p.first .. ", " ..
      #st.partial .. " bytes held): resynchronised"
    st.partial, st.pending = "", 0
    tl = tl:sub(p.first + 1)
  end
  st.expected = nxt(seq)
  remember(st, seq)
  st.partial = st.partial .. tl
  local tls = {}
  while #st.partial >= C.tl_flit_bytes do
    local chunk = st.partial:sub(1, C.tl_flit_bytes)
    st.partial = st.partial:sub(C.tl_flit_bytes + 1)
    local view, why = dissect_tl(chunk, st.pending)
    tls[#tls + 1] = {bytes = chunk, pending = st.pending, view = view, problem = why}
    if view == nil then
      notes[#notes + 1] = "TL flit not decodable (" .. why .. "); TL stream resynchronises"
      st.pending = 0
    else
      st.pending = view.pending_after
    end
  end
  local shown = seq
  if st.guessed then shown = nil end
  return {status = "accepted", seq = shown, replayed = replayed, notes = notes, tls = tls}
end

-- -- tree building -----------------------------------------------------------

local function message_format(word)
  local common = FMT["dl_message"]
  local v = {}
  local s = string.char(rshift(word, 24) % 256, rshift(word, 16) % 256,
                        rshift(word, 8) % 256, word % 256)
  for _, f in ipairs(common.fields) do v[f.name] = str_field(s, 0, f) end
  if v.compressed ~= 0 or v.rsvd_c ~= 0 then return common end
  return MSG_FORMATS[v.mclass * 8 + v.mtype] or common
end

local COMMAND_NAMES = field_of(FMT["tl_request"], "cmd").enum
local STATUS_NAMES = field_of(FMT["tl_response"], "status").enum
local FEC_NAMES = field_of(FMT["capture_header"], "fec_mode").enum
local ADDR = field_of(FMT["tl_request"], "addr")
local ADDR_LO = field_of(FMT["tl_compressed_request"], "addr_lo")

-- One TL flit (already walked by dissect_tl) into the tree; returns Info snippets.
local function add_tl_flit(tree, entry, index)
  local tvb = ByteArray.new(entry.bytes, true):tvb("TL flit " .. index)
  local sub = tree:add(X.tl_flit, tvb(0, C.tl_flit_bytes))
  sub:set_text("TL flit " .. index)
  sub:add(X.tl_pending, tvb(0, 1), entry.pending)
  local info = {}
  if entry.view == nil then
    sub:add_proto_expert_info(EX.tl, "TL flit not decodable: " .. entry.problem)
    return info
  end
  for h, half in ipairs(entry.view.halves) do
    local range = tvb(half.base, C.half_bytes)
    if half.kind == "data" then
      local item = sub:add(X.data, range)
      item:prepend_text("half" .. (h - 1) .. " ")
    else
      local hsub = sub:add(X.half, range, "control")
      hsub:set_text("half" .. (h - 1) .. ": control")
      local nops = 0
      for _, fld in ipairs(half.fields) do
        if fld.nop then
          nops = nops + 1
        else
          local vals, fsub = add_format(hsub, tvb, fld.start, fld.fmt,
            "s" .. fld.sector .. ": " .. fld.fmt.name)
          local ft = fld.values.ftype
          if ft == C.ftype.request then
            fsub:add(X.byte_addr, tvb(fld.start + ADDR.off, ADDR.len), vals.addr:lshift(2))
          elseif ft == C.ftype.compressed_request then
            fsub:add(X.byte_addr_lo, tvb(fld.start + ADDR_LO.off, ADDR_LO.len), vals.addr_lo * 4)
          end
          if ft == C.ftype.request or ft == C.ftype.compressed_request then
            info[#info + 1] = (COMMAND_NAMES[vals.cmd] or string.format("cmd0x%02x", vals.cmd))
              .. " tag=" .. vals.tag
          elseif ft == C.ftype.response or ft == C.ftype.compressed_response_data
              or ft == C.ftype.compressed_response_nodata then
            info[#info + 1] = "Response tag=" .. vals.tag .. " " ..
              (STATUS_NAMES[vals.status or 0] or tostring(vals.status))
          end
        end
      end
      if nops > 0 then hsub:add(X.nop_sectors, range, nops) end
    end
  end
  return info
end

-- The DL flit at `base` of `tvb` into `tree`; returns the Info text.
local function add_flit(tree, tvb, base, pinfo, direction)
  local s = tvb:raw(base, C.flit_bytes)
  local p = parse_flit(s)
  local key = pinfo.number
  local res = results[key]
  if res == nil then
    rx[direction] = rx[direction] or new_rx()
    res = receive(rx[direction], p)
    results[key] = res
  end
  local op = rshift(s:byte(1), 5)
  local ftree = tree:add(ualink, tvb(base, C.flit_bytes), "DL flit")
  local h = add_format(ftree, tvb, base, header_format(op), "header")
  local info = {(header_format(op).fields[1].enum[op] or ("op" .. op))}
  if is_command(op) then
    info[#info + 1] = (op == C.op.ack and "ack=" or "req=") .. h.ack_req_seq
  else
    info[#info + 1] = "seq=" .. h.flit_seq
  end
  for k = 1, #C.segment_lengths do
    local hdr_off = C.segment_offsets[k][1]
    local seg_len = C.segment_lengths[k]
    local sv, ssub = add_format(ftree, tvb, base + hdr_off, FMT["dl_segment_header"],
      "segment" .. (k - 1) .. " (" .. seg_len .. " bytes)", seg_len + 1)
    local seg = p.segs[k]
    if not p.problem and seg then
      if sv.msg == 1 then
        local w = p.words[k]
        add_format(ssub, tvb, base + seg.pos - C.message_bytes, message_format(w), "message")
      end
      for _, start in ipairs(p.starts) do
        if start >= seg.pos and start < seg.pos + seg.n then
          ssub:add(X.tl_start, tvb(base + start, 1), start)
        end
      end
      if seg.n > 0 then ssub:add(X.tl_bytes, tvb(base + seg.pos, seg.n)) end
      if seg.body > seg.n then ssub:add(X.fill, tvb(base + seg.pos + seg.n, seg.body - seg.n)) end
    end
  end
  local crc_range = tvb(base + C.crc_coverage, 4)
  ftree:add(X.crc, crc_range)
  ftree:add(X.crc_computed, crc_range, p.computed):set_generated()
  local status = ftree:add(X.crc_status, crc_range, p.crc_bad and 0 or 1)
  status:set_generated()
  if p.crc_bad then
    status:add_proto_expert_info(EX.crc, p.problem)
    return table.concat(info, " ") .. " [CRC ERROR]"
  end
  if p.problem then
    ftree:add_proto_expert_info(EX.malformed, "malformed: " .. p.problem)
    return table.concat(info, " ") .. " [MALFORMED]"
  end
  if p.payload then info[#info + 1] = "tl=" .. #p.tl .. "B" end
  if res.status ~= "" then
    local st = ftree:add(X.rx_status, tvb(base, 3), res.status)
    st:set_generated()
    if res.seq then ftree:add(X.seq, tvb(base, 3), res.seq):set_generated() end
    if res.replayed then ftree:add(X.replayed, tvb(base, 3), true):set_generated() end
    if res.seq and is_command(op) then info[#info + 1] = "seq=" .. res.seq end
    if res.status ~= "accepted" then info[#info + 1] = "[" .. res.status .. "]" end
    if res.replayed then info[#info + 1] = "[replayed]" end
  end
  for _, n in ipairs(res.notes or {}) do
    local item = ftree:add(X.note, tvb(base, 3), n)
    item:set_generated()
    item:add_proto_expert_info(EX.rx, n)
  end
  local content = {}
  for i, entry in ipairs(res.tls or {}) do
    for _, t in ipairs(add_tl_flit(tree, entry, i - 1)) do content[#content + 1] = t end
  end
  local text = table.concat(info, " ")
  if #content > 0 then text = text .. " | " .. table.concat(content, "; ") end
  return text
end

-- -- the record: pseudo-header magic check and dispatch ------------------------

local wtap_table = DissectorTable.get("wtap_encap")
local user0 = (wtap_encaps or wtap).USER0
local previous = wtap_table:get_dissector(user0)  -- e.g. the DLT_USER preferences

function ualink.init()
  rx = {}
  results = {}
end

function ualink.dissector(tvb, pinfo, tree)
  local len = tvb:len()
  if len < C.pseudo_header_bytes or tvb(0, 1):uint() ~= C.magic then
    if previous ~= nil then return previous:call(tvb, pinfo, tree) end
    return 0  -- not ours: leave it to other dissectors
  end
  pinfo.cols.protocol = "UALink"
  local root = tree:add(ualink, tvb(), "UALink capture record")
  local hv, htree = add_format(root, tvb, 0, FMT["capture_header"], "pseudo-header")
  local dir = C.directions[hv.direction] or ("direction" .. hv.direction)
  pinfo.cols.src = (hv.direction == 0) and "A" or "B"
  pinfo.cols.dst = (hv.direction == 0) and "B" or "A"
  local problems = {}
  if hv.version ~= 1 then problems[#problems + 1] = "unknown version " .. hv.version end
  if hv.header_length ~= C.pseudo_header_bytes then
    problems[#problems + 1] = "header_length " .. hv.header_length .. " is not 16"
  end
  if hv.payload_length ~= len - C.pseudo_header_bytes then
    problems[#problems + 1] = "payload_length " .. hv.payload_length .. " but " ..
      (len - C.pseudo_header_bytes) .. " bytes follow"
  end
  if hv.interleave ~= 1 and hv.interleave ~= 2 and hv.interleave ~= 4 then
    problems[#problems + 1] = "interleave " .. hv.interleave .. " is not 1, 2 or 4"
  end
  local kind = C.record_kinds[hv.record_kind]
  if kind == "dl_flit" and len - C.pseudo_header_bytes ~= C.flit_bytes then
    problems[#problems + 1] = "a dl_flit record holds 640 bytes"
  end
  if hv.uncorrectable == 1 then
    htree:add_proto_expert_info(EX.uncorrectable, "FEC decoder flagged this flit uncorrectable")
  end
  if #problems > 0 or kind == nil then
    htree:add_proto_expert_info(EX.record, table.concat(problems, "; "))
    pinfo.cols.info = "malformed record: " .. table.concat(problems, "; ")
    return len
  end
  local arrow = (hv.direction == 0) and "A>B " or "B>A "
  if kind == "fec_codewords" then
    root:add(X.codewords, tvb(C.pseudo_header_bytes))
    pinfo.cols.info = arrow .. "fec_codewords " .. (len - C.pseudo_header_bytes) .. "B " ..
      (FEC_NAMES[hv.fec_mode] or "?") .. " (not FEC-decoded here)"
    return len
  end
  pinfo.cols.info = arrow .. add_flit(root, tvb, C.pseudo_header_bytes, pinfo, dir)
  return len
end

wtap_table:add(user0, ualink)
