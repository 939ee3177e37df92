// Loads one layer's exported memh files with $readmemh and prints every index entry's
// bytes as "E <case> <stream> <field> <hex>" lines, so a test can check that the memh
// files reproduce the JSON vectors' bytes. Plain Icarus Verilog (no cocotb needed):
//   iverilog -g2005 -Ptb_memh_echo.STIM_DEPTH=.. -Ptb_memh_echo.EXPECT_DEPTH=..
//            -Ptb_memh_echo.ENTRIES=.. -o echo tb_memh_echo.v
//   vvp echo +stim=dl.stim.memh +expect=dl.expect.memh +index=dl.index.memh
module tb_memh_echo;
    parameter STIM_DEPTH = 1;
    parameter EXPECT_DEPTH = 1;
    parameter ENTRIES = 1;
    reg [7:0]   stim [0:STIM_DEPTH-1];
    reg [7:0]   expd [0:EXPECT_DEPTH-1];
    reg [127:0] index [0:ENTRIES-1];
    reg [8*1024-1:0] path;
    integer i, j;
    reg [31:0] off, len;
    initial begin
        if ($value$plusargs("stim=%s", path)) $readmemh(path, stim);
        if ($value$plusargs("expect=%s", path)) $readmemh(path, expd);
        if ($value$plusargs("index=%s", path)) $readmemh(path, index);
        for (i = 0; i < ENTRIES; i = i + 1) begin
            off = index[i][63:32];
            len = index[i][31:0];
            $write("E %0d %0d %0d ", index[i][127:112], index[i][111:104], index[i][103:96]);
            for (j = 0; j < len; j = j + 1)
                $write("%02x", index[i][111:104] ? expd[off + j] : stim[off + j]);
            $write("\n");
        end
        $finish;
    end
endmodule
