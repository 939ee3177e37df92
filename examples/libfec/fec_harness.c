/*
 * fec_harness: a difftest line-protocol target over Debian's libfec.
 *
 * Usage: fec_harness CODEC    (CODEC: phy-kp4-encode, phy-kp4-decode,
 *                                     phy-ll-encode,  phy-ll-decode)
 *
 * One request per stdin line (lowercase hex of the input bytes), one response
 * per stdout line, flushed, until stdin closes (specs/difftest.md, "Line
 * protocol").  This file does the flit <-> codeword mapping of specs/phy.md
 * itself; libfec (init_rs_int / encode_rs_int / decode_rs_int, see rs(3))
 * does only the Reed-Solomon arithmetic.
 *
 * Written for ualink_ref from the specs and the libfec man page; no code
 * taken from libfec or elsewhere.
 *
 * Build: gcc -O2 -Wall -Wextra -Werror -std=c99 -o fec_harness fec_harness.c -lfec
 * (-DSEEDED_BUG: a variant that ignores libfec's "uncorrectable" return, to
 * show difftest catching a wrong harness.)
 */
#define _POSIX_C_SOURCE 200809L /* getline */
#include <fec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* specs/phy.md "Parameters": GF(2^10), p(x) = x^10 + x^3 + 1, alpha = x,
 * generator roots alpha^0 .. alpha^(2t-1). In rs(3) terms: gfpoly with the
 * x^0 coefficient in the low bit, fcr and prim in index (log) form. */
#define SYMSIZE 10
#define GFPOLY 0x409 /* bits 10, 3, 0 */
#define FCR 0        /* first consecutive root alpha^0 */
#define PRIM 1       /* roots are consecutive powers of alpha^1 */
#define FULL_N 1023  /* 2^10 - 1: rs(3)'s full-length code */
#define FLIT_BYTES 640

/* specs/phy.md "Flit <-> codeword mapping". */
struct mode {
    const char *name;
    int n, k;           /* RS(n, k) */
    int per_flit;       /* codewords per flit */
    int chunk_bytes;    /* flit bytes carried by one codeword */
    int codeword_bytes; /* n * 10 bits, whole bytes in both modes */
};

static const struct mode KP4 = {"kp4", 544, 514, 1, 640, 680};
static const struct mode LL = {"ll", 272, 258, 2, 320, 340};

/* Bit p of a PHY byte string is bit p % 8 of byte p / 8 (specs/phy.md "Bit
 * numbering"); symbol s occupies bits 10s .. 10s+9, its LSB first. */
static unsigned get_symbol(const unsigned char *bytes, int s)
{
    unsigned v = 0;
    for (int b = 0; b < SYMSIZE; b++) {
        int p = SYMSIZE * s + b;
        v |= (unsigned)((bytes[p / 8] >> (p % 8)) & 1) << b;
    }
    return v;
}

static void put_symbol(unsigned char *bytes, int s, unsigned v)
{
    for (int b = 0; b < SYMSIZE; b++) {
        int p = SYMSIZE * s + b;
        if ((v >> b) & 1)
            bytes[p / 8] |= (unsigned char)(1u << (p % 8));
    }
}

/* Message symbols of one codeword: the chunk's bits, then zero spare bits up
 * to 10k bits (specs/phy.md "Spare bits"). */
static void chunk_to_message(const struct mode *m, const unsigned char *chunk, unsigned *data)
{
    unsigned char msg[FLIT_BYTES + 8];
    memset(msg, 0, sizeof msg);
    memcpy(msg, chunk, (size_t)m->chunk_bytes);
    for (int s = 0; s < m->k; s++)
        data[s] = get_symbol(msg, s);
}

/* The n symbols of a codeword, symbol 0 first, packed into codeword_bytes. */
static void symbols_to_bytes(const struct mode *m, const unsigned *sym, unsigned char *out)
{
    memset(out, 0, (size_t)m->codeword_bytes);
    for (int s = 0; s < m->n; s++)
        put_symbol(out, s, sym[s]);
}

/* Encode one chunk. Symbol 0 (sent first) is the coefficient of x^(n-1)
 * (specs/phy.md "Symbol order"), which is rs(3)'s data[0]; the code is
 * shortened from 1023 symbols by pad = 1023 - n leading zeros. */
static void encode_codeword(void *rs, const struct mode *m, const unsigned char *chunk,
                            unsigned char *out)
{
    unsigned sym[FULL_N];
    chunk_to_message(m, chunk, sym);
    encode_rs_int(rs, sym, sym + m->k);
    symbols_to_bytes(m, sym, out);
}

/* Decode one codeword in place. Returns the symbols corrected, or -1 when
 * flagged: libfec reports it uncorrectable, or the spare bits are non-zero
 * after correction (specs/phy.md "Receive side", project choice of the
 * model); a flagged codeword is left exactly as received. */
static int decode_codeword(void *rs, const struct mode *m, unsigned char *cw)
{
    unsigned sym[FULL_N];
    unsigned char fixed[FLIT_BYTES + 48];
    for (int s = 0; s < m->n; s++)
        sym[s] = get_symbol(cw, s);
    int count = decode_rs_int(rs, sym, NULL, 0);
#ifdef SEEDED_BUG
    if (count < 0) /* the bug: libfec's "uncorrectable" is ignored */
        count = 0;
#else
    if (count < 0)
        return -1;
#endif
    symbols_to_bytes(m, sym, fixed);
    int first = m->chunk_bytes * 8, end = m->k * SYMSIZE;
    for (int p = first; p < end; p++)
        if ((fixed[p / 8] >> (p % 8)) & 1)
            return -1;
    memcpy(cw, fixed, (size_t)m->codeword_bytes);
    return count;
}

/* -- line protocol ------------------------------------------------------- */

static int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Parse hex into out (capacity len / 2); returns the byte count or -1. */
static long parse_hex(const char *text, size_t len, unsigned char *out)
{
    if (len % 2)
        return -1;
    for (size_t i = 0; i < len; i += 2) {
        int hi = hex_value(text[i]), lo = hex_value(text[i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i / 2] = (unsigned char)(hi << 4 | lo);
    }
    return (long)(len / 2);
}

static void write_hex(const unsigned char *bytes, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        putchar(digits[bytes[i] >> 4]);
        putchar(digits[bytes[i] & 15]);
    }
}

/* Answer one request of `len` bytes (the length rules of specs/difftest.md
 * "Lengths": exactly one flit per request, 640 bytes to encode, its wire bytes
 * to decode; any other length is answered with the model's error class). */
static void respond(void *rs, const struct mode *m, int encode, unsigned char *in, size_t len)
{
    size_t per_wire = (size_t)m->per_flit * (size_t)m->codeword_bytes;
    if (encode) {
        if (len != FLIT_BYTES) {
            puts("ERR EncodeError");
            return;
        }
        unsigned char cw[FLIT_BYTES + 48];
        for (size_t off = 0; off < len; off += (size_t)m->chunk_bytes) {
            encode_codeword(rs, m, in + off, cw);
            write_hex(cw, (size_t)m->codeword_bytes);
        }
        putchar('\n');
        return;
    }
    if (len != per_wire) {
        puts("ERR TruncatedError");
        return;
    }
    long corrected = 0;
    int flagged = 0;
    for (size_t off = 0; off < len; off += (size_t)m->codeword_bytes) {
        int count = decode_codeword(rs, m, in + off);
        if (count < 0)
            flagged = 1;
        else
            corrected += count;
    }
    printf("{\"corrected\":%ld,\"flit\":\"", corrected);
    for (size_t off = 0; off < len; off += (size_t)m->codeword_bytes)
        write_hex(in + off, (size_t)m->chunk_bytes);
    printf("\",\"uncorrectable\":%s}\n", flagged ? "true" : "false");
}

int main(int argc, char **argv)
{
    const struct mode *m = NULL;
    int encode = 0;
    if (argc == 2) {
        if (!strcmp(argv[1], "phy-kp4-encode") || !strcmp(argv[1], "phy-kp4-decode"))
            m = &KP4;
        else if (!strcmp(argv[1], "phy-ll-encode") || !strcmp(argv[1], "phy-ll-decode"))
            m = &LL;
        encode = m && strstr(argv[1], "-encode") != NULL;
    }
    if (!m) {
        fprintf(stderr, "usage: fec_harness phy-kp4-encode|phy-kp4-decode|"
                        "phy-ll-encode|phy-ll-decode\n");
        return 2;
    }
    void *rs = init_rs_int(SYMSIZE, GFPOLY, FCR, PRIM, m->n - m->k, FULL_N - m->n);
    if (!rs) {
        fprintf(stderr, "fec_harness: init_rs_int refused the %s parameters\n", m->name);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    unsigned char *buf = NULL;
    size_t buf_cap = 0;
    while ((got = getline(&line, &cap, stdin)) >= 0) {
        size_t len = (size_t)got;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
            len--;
        if (len / 2 + 1 > buf_cap) {
            buf_cap = len / 2 + 1;
            unsigned char *grown = realloc(buf, buf_cap);
            if (!grown) {
                fprintf(stderr, "fec_harness: out of memory\n");
                return 1;
            }
            buf = grown;
        }
        long bytes = parse_hex(line, len, buf);
        if (bytes < 0)
            puts("ERR"); /* not a request: rejected without a class */
        else
            respond(rs, m, encode, buf, (size_t)bytes);
        fflush(stdout);
    }
    free(buf);
    free(line);
    free_rs_int(rs);
    return 0;
}
