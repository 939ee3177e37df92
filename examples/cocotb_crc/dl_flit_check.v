// DL flit CRC-32 check and header field extraction (ualink_ref worked example, issue 14).
//
// Input: one 640-byte DL flit, byte 0 in flit[5119:5112] (big-endian, as ualink_ref
// encodes it). Layout and rules: specs/dl.md. CRC-32: IEEE 802.3 (reflected polynomial
// 0xEDB88320, init and final XOR 0xFFFFFFFF) over bytes 0..635, stored big-endian in
// bytes 636..639 (ualink_ref/dl/crc.py). Header (bytes 0..2, MSB first):
//   explicit / replay (op 0, 1): op[23:21] payload[20] rsvd_a[19:17] flit_seq[16:8] rsvd_b[7:0]
//   ack / replay_request (2, 3): op[23:21] payload[20] ack_req_seq[19:11] flit_seq_lo[10:8] rsvd[7:0]
// Purely combinational; a verification example, not a timing-closed design.
//
// Compile with -DSEEDED_BUG for the deliberately broken variant (one seeded bug: the
// ack_req_seq field is sliced one bit too low).
module dl_flit_check (
    input  wire [5119:0] flit,
    output reg  [31:0]   crc,          // CRC-32 computed over bytes 0..635
    output wire          crc_ok,       // equals the stored CRC
    output wire          op_ok,        // op is one of the four defined ops (0..3)
    output wire          rsvd_ok,      // reserved header fields are zero
    output wire [2:0]    op,
    output wire          payload,
    output wire [8:0]    flit_seq,     // explicit / replay flits, else 0
    output wire [8:0]    ack_req_seq,  // ack / replay_request flits, else 0
    output wire [2:0]    flit_seq_lo   // ack / replay_request flits, else 0
);
    wire [23:0] h = flit[5119:5096];
    wire is_cmd = (h[23:21] == 3'd2) || (h[23:21] == 3'd3);

    assign op = h[23:21];
    assign payload = h[20];
    assign op_ok = (h[23:21] <= 3'd3);
    assign rsvd_ok = is_cmd ? (h[7:0] == 8'd0) : (h[19:17] == 3'd0 && h[7:0] == 8'd0);
    assign flit_seq = is_cmd ? 9'd0 : h[16:8];
`ifdef SEEDED_BUG
    assign ack_req_seq = is_cmd ? h[18:10] : 9'd0;  // BUG: one bit too low
`else
    assign ack_req_seq = is_cmd ? h[19:11] : 9'd0;
`endif
    assign flit_seq_lo = is_cmd ? h[10:8] : 3'd0;
    assign crc_ok = (crc == flit[31:0]);

    integer i, b;
    reg [31:0] c;
    always @(*) begin
        c = 32'hFFFFFFFF;
        for (i = 0; i < 636; i = i + 1) begin
            c = c ^ {24'd0, flit[5119 - 8 * i -: 8]};
            for (b = 0; b < 8; b = b + 1)
                c = c[0] ? ((c >> 1) ^ 32'hEDB88320) : (c >> 1);
        end
        crc = c ^ 32'hFFFFFFFF;
    end
endmodule
