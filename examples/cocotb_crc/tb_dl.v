// cocotb top for the example: the DUT plus exported vectors loaded with $readmemh.
// cocotb drives `flit_in` directly (fuzzing), or selects index entry `sel` and pulses
// `load` to copy that entry's bytes from the stimulus memory into `flit` (vectors).
// Files come from plusargs +stim=<dl.stim.memh> +expect=<dl.expect.memh>
// +index=<dl.index.memh> (memh layout v2: stream [151:144], offset [63:32], length
// [31:0]); memory depths from the parameters (the test passes the exported sizes).
module tb_dl #(parameter STIM_DEPTH = 1, parameter EXPECT_DEPTH = 1, parameter ENTRIES = 1) (
    input  wire [5119:0] flit_in,
    input  wire          use_mem,
    input  wire [15:0]   sel,
    input  wire          load
);
    reg [7:0]   stim [0:STIM_DEPTH-1];
    reg [7:0]   expd [0:EXPECT_DEPTH-1];
    reg [191:0] index [0:ENTRIES-1];  // memh layout v2 (specs/difftest.md)
    reg [5119:0] mem_flit;
    reg [191:0] entry;
    reg [8*1024-1:0] path;
    integer j;

    initial begin
        mem_flit = 0;
        if ($value$plusargs("stim=%s", path)) $readmemh(path, stim);
        if ($value$plusargs("expect=%s", path)) $readmemh(path, expd);
        if ($value$plusargs("index=%s", path)) $readmemh(path, index);
    end

    always @(posedge load) begin
        entry = index[sel];
        for (j = 0; j < 640; j = j + 1)
            mem_flit[5119 - 8 * j -: 8] = (j < entry[31:0])
                ? (entry[151:144] ? expd[entry[63:32] + j] : stim[entry[63:32] + j]) : 8'd0;
    end

    wire [5119:0] flit = use_mem ? mem_flit : flit_in;
    wire [31:0] crc;
    wire crc_ok, op_ok, rsvd_ok, payload;
    wire [2:0] op, flit_seq_lo;
    wire [8:0] flit_seq, ack_req_seq;
    dl_flit_check dut (.flit(flit), .crc(crc), .crc_ok(crc_ok), .op_ok(op_ok),
                       .rsvd_ok(rsvd_ok), .op(op), .payload(payload), .flit_seq(flit_seq),
                       .ack_req_seq(ack_req_seq), .flit_seq_lo(flit_seq_lo));
endmodule
