// Loads one vector file's exported memh files (layout v2, specs/difftest.md "Export")
// with $readmemh and prints every index entry as one line
//   E <case> <kind> <field> <stream> <mode> <interleave> <verdict> <corrected> <uncorrectable> <hex>
// (<hex>: the entry's words, 2 hex digits per byte, 3 per 10-bit symbol), so a test can
// check that the files reproduce the JSON vectors. Plain Icarus Verilog (no cocotb needed):
//   iverilog -g2005 -Ptb_memh_echo.STIM_DEPTH=.. -Ptb_memh_echo.EXPECT_DEPTH=..
//            -Ptb_memh_echo.STIM_SYM_DEPTH=.. -Ptb_memh_echo.EXPECT_SYM_DEPTH=..
//            -Ptb_memh_echo.ENTRIES=.. -o echo tb_memh_echo.v
//   vvp echo +index=phy.index.memh +stim=phy.stim.memh +expect=phy.expect.memh
//            +stim_sym=phy.stim.sym.memh +expect_sym=phy.expect.sym.memh
// A stream file that was not written (no words) is simply not passed.
module tb_memh_echo;
    parameter STIM_DEPTH = 1;
    parameter EXPECT_DEPTH = 1;
    parameter STIM_SYM_DEPTH = 1;
    parameter EXPECT_SYM_DEPTH = 1;
    parameter ENTRIES = 1;
    reg [7:0]   stim [0:STIM_DEPTH-1];             // stream 0
    reg [7:0]   expd [0:EXPECT_DEPTH-1];           // stream 1
    reg [9:0]   stim_sym [0:STIM_SYM_DEPTH-1];     // stream 2
    reg [9:0]   expd_sym [0:EXPECT_SYM_DEPTH-1];   // stream 3
    reg [191:0] index [0:ENTRIES-1];
    reg [8*1024-1:0] path;
    integer i, j;
    reg [191:0] e;
    reg [31:0] off, len;
    initial begin
        if ($value$plusargs("stim=%s", path)) $readmemh(path, stim);
        if ($value$plusargs("expect=%s", path)) $readmemh(path, expd);
        if ($value$plusargs("stim_sym=%s", path)) $readmemh(path, stim_sym);
        if ($value$plusargs("expect_sym=%s", path)) $readmemh(path, expd_sym);
        if ($value$plusargs("index=%s", path)) $readmemh(path, index);
        for (i = 0; i < ENTRIES; i = i + 1) begin
            e = index[i];
            if (e[191:184] != 8'd2) begin
                $display("BAD memh version %0d in index entry %0d", e[191:184], i);
                $finish;
            end
            off = e[63:32];
            len = e[31:0];
            //         case          kind           field          stream         mode
            $write("E %0d %0d %0d %0d %0d %0d %0d %0d %0d ", e[175:160], e[183:176],
                   e[159:152], e[151:144], e[143:136],
            //         interleave     verdict        corrected      uncorrectable
                   e[135:128], e[127:120], e[95:64], e[111:96]);
            for (j = 0; j < len; j = j + 1)
                case (e[151:144])
                    8'd0: $write("%02x", stim[off + j]);
                    8'd1: $write("%02x", expd[off + j]);
                    8'd2: $write("%03x", stim_sym[off + j]);
                    default: $write("%03x", expd_sym[off + j]);
                endcase
            $write("\n");
        end
        $finish;
    end
endmodule
