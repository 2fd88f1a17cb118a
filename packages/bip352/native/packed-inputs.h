/*
 * The scan inputs of packed transactions (packBlockAnswer's format, rpc-block.c) read in C: the
 * eligible input keys, the smallest outpoint and the taproot outputs' x-only keys of each
 * transaction, what src/inputs.ts and src/receiver.ts (scanJob) work out in JavaScript for
 * scanMany. Reading them here saves the scan workers the objects of every input (hex txids,
 * witness arrays, subarrays) and their garbage: the same rules, the same answers (the tests
 * compare the two on the BIP-352 vectors and on generated inputs of every kind).
 *
 * Included by scan.c after libsecp256k1 (its SHA-256); RIPEMD-160 is here, for HASH160 of
 * P2PKH keys.
 */

/* ---- RIPEMD-160 (Dobbertin, Bosselaers, Preneel 1996), for 32-byte messages only: HASH160's
   second step hashes a SHA-256 digest, one block with its padding. */

static uint32_t rmd_rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static uint32_t rmd_f(int j, uint32_t x, uint32_t y, uint32_t z) {
    switch (j / 16) {
    case 0: return x ^ y ^ z;
    case 1: return (x & y) | (~x & z);
    case 2: return (x | ~y) ^ z;
    case 3: return (x & z) | (y & ~z);
    default: return x ^ (y | ~z);
    }
}

static void ripemd160_32(unsigned char out[20], const unsigned char in[32]) {
    static const unsigned char R[80] = {
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 7, 4, 13, 1, 10, 6, 15, 3, 12, 0, 9, 5, 2, 14, 11, 8,
        3, 10, 14, 4, 9, 15, 8, 1, 2, 7, 0, 6, 13, 11, 5, 12, 1, 9, 11, 10, 0, 8, 12, 4, 13, 3, 7, 15, 14, 5, 6, 2,
        4, 0, 5, 9, 7, 12, 2, 10, 14, 1, 3, 8, 11, 6, 15, 13};
    static const unsigned char RR[80] = {
        5, 14, 7, 0, 9, 2, 11, 4, 13, 6, 15, 8, 1, 10, 3, 12, 6, 11, 3, 7, 0, 13, 5, 10, 14, 15, 8, 12, 4, 9, 1, 2,
        15, 5, 1, 3, 7, 14, 6, 9, 11, 8, 12, 2, 10, 0, 4, 13, 8, 6, 4, 1, 3, 11, 15, 0, 5, 12, 2, 13, 9, 7, 10, 14,
        12, 15, 10, 4, 1, 5, 8, 7, 6, 2, 13, 14, 0, 3, 9, 11};
    static const unsigned char S[80] = {
        11, 14, 15, 12, 5, 8, 7, 9, 11, 13, 14, 15, 6, 7, 9, 8, 7, 6, 8, 13, 11, 9, 7, 15, 7, 12, 15, 9, 11, 7, 13, 12,
        11, 13, 6, 7, 14, 9, 13, 15, 14, 8, 13, 6, 5, 12, 7, 5, 11, 12, 14, 15, 14, 15, 9, 8, 9, 14, 5, 6, 8, 6, 5, 12,
        9, 15, 5, 11, 6, 8, 13, 12, 5, 12, 13, 14, 11, 8, 5, 6};
    static const unsigned char SS[80] = {
        8, 9, 9, 11, 13, 15, 15, 5, 7, 7, 8, 11, 14, 14, 12, 6, 9, 13, 15, 7, 12, 8, 9, 11, 7, 7, 12, 7, 6, 15, 13, 11,
        9, 7, 15, 11, 8, 6, 6, 14, 12, 13, 5, 14, 13, 13, 7, 5, 15, 5, 8, 11, 14, 14, 6, 14, 6, 9, 12, 9, 12, 5, 15, 8,
        8, 5, 12, 9, 12, 5, 14, 6, 8, 13, 6, 5, 15, 13, 11, 11};
    static const uint32_t K[5] = {0x00000000u, 0x5A827999u, 0x6ED9EBA1u, 0x8F1BBCDCu, 0xA953FD4Eu};
    static const uint32_t KK[5] = {0x50A28BE6u, 0x5C4DD124u, 0x6D703EF3u, 0x7A6D76E9u, 0x00000000u};
    uint32_t x[16], h[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
    uint32_t a, b, c, d, e, aa, bb, cc, dd, ee, t;
    int j;
    for (j = 0; j < 8; j++) x[j] = (uint32_t)in[4 * j] | (uint32_t)in[4 * j + 1] << 8 | (uint32_t)in[4 * j + 2] << 16 | (uint32_t)in[4 * j + 3] << 24;
    x[8] = 0x80; /* the padding: one bit, zeros, the length in bits (256) little-endian */
    for (j = 9; j < 14; j++) x[j] = 0;
    x[14] = 256;
    x[15] = 0;
    a = aa = h[0];
    b = bb = h[1];
    c = cc = h[2];
    d = dd = h[3];
    e = ee = h[4];
    for (j = 0; j < 80; j++) {
        t = rmd_rol(a + rmd_f(j, b, c, d) + x[R[j]] + K[j / 16], S[j]) + e;
        a = e;
        e = d;
        d = rmd_rol(c, 10);
        c = b;
        b = t;
        t = rmd_rol(aa + rmd_f(79 - j, bb, cc, dd) + x[RR[j]] + KK[j / 16], SS[j]) + ee;
        aa = ee;
        ee = dd;
        dd = rmd_rol(cc, 10);
        cc = bb;
        bb = t;
    }
    t = h[1] + c + dd;
    h[1] = h[2] + d + ee;
    h[2] = h[3] + e + aa;
    h[3] = h[4] + a + bb;
    h[4] = h[0] + b + cc;
    h[0] = t;
    for (j = 0; j < 5; j++) {
        out[4 * j] = (unsigned char)h[j];
        out[4 * j + 1] = (unsigned char)(h[j] >> 8);
        out[4 * j + 2] = (unsigned char)(h[j] >> 16);
        out[4 * j + 3] = (unsigned char)(h[j] >> 24);
    }
}

/* HASH160 = RIPEMD-160(SHA-256(data)). */
static void hash160(unsigned char out[20], const unsigned char *data, size_t n) {
    unsigned char digest[32];
    secp256k1_sha256 h;
    secp256k1_sha256_initialize(&h);
    secp256k1_sha256_write(&h, data, n);
    secp256k1_sha256_finalize(&h, digest);
    ripemd160_32(out, digest);
}

/* ---- Reading the packed format. */

typedef struct {
    const unsigned char *p, *end;
} packed_cursor;

typedef struct {
    const unsigned char *b;
    size_t n;
} packed_bytes;

static int packed_u32(packed_cursor *c, uint32_t *v) {
    if (c->end - c->p < 4) return 0;
    *v = (uint32_t)c->p[0] | (uint32_t)c->p[1] << 8 | (uint32_t)c->p[2] << 16 | (uint32_t)c->p[3] << 24;
    c->p += 4;
    return 1;
}

static int packed_take(packed_cursor *c, size_t n, const unsigned char **at) {
    if ((size_t)(c->end - c->p) < n) return 0;
    *at = c->p;
    c->p += n;
    return 1;
}

static int packed_var(packed_cursor *c, packed_bytes *b) {
    uint32_t n;
    if (!packed_u32(c, &n)) return 0;
    b->n = n;
    return packed_take(c, n, &b->b);
}

/* ---- BIP-352 "Inputs For Shared Secret Derivation" (src/inputs.ts, the same rules). */

static const unsigned char NUMS_H[32] = {
    0x50, 0x92, 0x9b, 0x74, 0xc1, 0xa0, 0x49, 0x54, 0xb7, 0x8b, 0x4b, 0x60, 0x35, 0xe9, 0x7a, 0x5e,
    0x07, 0x8a, 0x5a, 0x0f, 0x28, 0xec, 0x96, 0xd5, 0x47, 0xbf, 0xee, 0x9a, 0xce, 0x80, 0x3a, 0xc0};

/* Witness version of a scriptPubKey (BIP-141: OP_0..OP_16 then one 2..40-byte push), or -1. */
static int witness_version(const packed_bytes *s) {
    if (s->n < 4 || s->n > 42 || s->b[1] != s->n - 2) return -1;
    if (s->b[0] == 0x00) return 0;
    if (s->b[0] >= 0x51 && s->b[0] <= 0x60) return s->b[0] - 0x50;
    return -1;
}

static int is_p2tr(const unsigned char *s, size_t n) { return n == 34 && s[0] == 0x51 && s[1] == 0x20; }
static int is_p2wpkh(const unsigned char *s, size_t n) { return n == 22 && s[0] == 0x00 && s[1] == 0x14; }
static int is_p2sh(const unsigned char *s, size_t n) { return n == 23 && s[0] == 0xa9 && s[1] == 0x14 && s[22] == 0x87; }
static int is_p2pkh(const unsigned char *s, size_t n) {
    return n == 25 && s[0] == 0x76 && s[1] == 0xa9 && s[2] == 0x14 && s[23] == 0x88 && s[24] == 0xac;
}
static int is_compressed_key(const packed_bytes *b) { return b->n == 33 && (b->b[0] == 0x02 || b->b[0] == 0x03); }

/* One packed input, its witness reduced to the count and the last two items. */
typedef struct {
    const unsigned char *txid; /* 32 bytes, as Core prints it */
    uint32_t vout;
    packed_bytes script_sig, spk, last, before_last;
    uint32_t witness_items;
} packed_input;

/* The key input `in` contributes (33 bytes to key), 1; or 0 when it is not on the list. */
static int input_key(const packed_input *in, unsigned char key[33]) {
    const packed_bytes *spk = &in->spk;
    if (is_p2tr(spk->b, spk->n)) {
        uint32_t n = in->witness_items;
        const packed_bytes *control = &in->last;
        if (n == 0) return 0;
        if (n > 1 && in->last.n > 0 && in->last.b[0] == 0x50) {
            n--; /* an annex (BIP-341): the control block is the item before it */
            control = &in->before_last;
        }
        /* a script-path spend whose control block carries the NUMS point H as internal key */
        if (n > 1 && control->n >= 33 && memcmp(control->b + 1, NUMS_H, 32) == 0) return 0;
        key[0] = 0x02;
        memcpy(key + 1, spk->b + 2, 32);
        return 1;
    }
    if (is_p2wpkh(spk->b, spk->n)) {
        if (in->witness_items == 0 || !is_compressed_key(&in->last)) return 0;
        memcpy(key, in->last.b, 33);
        return 1;
    }
    if (is_p2sh(spk->b, spk->n)) {
        const packed_bytes *sig = &in->script_sig;
        if (sig->n != 23 || sig->b[0] != 0x16 || !is_p2wpkh(sig->b + 1, 22)) return 0;
        if (in->witness_items == 0 || !is_compressed_key(&in->last)) return 0;
        memcpy(key, in->last.b, 33);
        return 1;
    }
    if (is_p2pkh(spk->b, spk->n)) {
        const packed_bytes *sig = &in->script_sig;
        unsigned char h[20];
        size_t end;
        for (end = sig->n; end >= 33; end--) {
            const unsigned char *window = sig->b + end - 33;
            if (window[0] != 0x02 && window[0] != 0x03) continue; /* only a compressed key can qualify */
            hash160(h, window, 33);
            if (memcmp(h, spk->b + 3, 20) == 0) {
                memcpy(key, window, 33);
                return 1;
            }
        }
        return 0;
    }
    return 0;
}

/* ---- A run of packed transactions read into scan_many's arguments. */

typedef struct {
    unsigned char *b;
    size_t n, cap;
} packed_grow;

static int grow_room(packed_grow *g, size_t more) {
    size_t cap;
    unsigned char *b;
    if (g->n + more <= g->cap) return 1;
    cap = g->cap * 2 > g->n + more ? g->cap * 2 : g->n + more + 4096;
    if ((b = realloc(g->b, cap)) == NULL) return 0;
    g->b = b;
    g->cap = cap;
    return 1;
}

/* What scan_many takes, for the transactions of a packed run that are to be scanned. */
typedef struct {
    packed_grow keys, outpoints, xs, nkeys, nxs, offsets; /* nkeys, nxs, offsets: uint32_t each */
    size_t count;
} packed_jobs;

static void packed_jobs_free(packed_jobs *j) {
    free(j->keys.b);
    free(j->outpoints.b);
    free(j->xs.b);
    free(j->nkeys.b);
    free(j->nxs.b);
    free(j->offsets.b);
}

#define PACKED_MALFORMED 0
#define PACKED_NO_MEMORY (-1)
#define PACKED_INPUT_MIN 48  /* txid, vout, three lengths and a count */
#define PACKED_OUTPUT_SIZE 46 /* n, value, script */

/*
 * Reads the packed transactions of [p, end) (starting at offset `base` of their buffer) into `j`:
 * each one with a taproot output, an eligible input key and no SegWit v2+ input (BIP-352
 * "Scanning silent payment eligible transactions") gets its keys, outpoint_L and x-only keys;
 * the others cannot pay anyone and are left out. Returns 1, PACKED_MALFORMED, or PACKED_NO_MEMORY.
 */
static int packed_read(packed_jobs *j, const unsigned char *p, const unsigned char *end, size_t base) {
    packed_cursor c = {p, end};
    while (c.p < c.end) {
        uint32_t offset = (uint32_t)(base + (size_t)(c.p - p)), nin, nout, i, items, k;
        const unsigned char *txid, *value, *script;
        unsigned char best[36], op[36];
        size_t keys_at = j->keys.n, xs_at = j->xs.n, nk = 0, nx = 0;
        int unknown_segwit = 0;
        if (!packed_take(&c, 32, &txid) || !packed_u32(&c, &nin) || !packed_u32(&c, &nout)) return PACKED_MALFORMED;
        if (nin > (size_t)(c.end - c.p) / PACKED_INPUT_MIN || nout > (size_t)(c.end - c.p) / PACKED_OUTPUT_SIZE) return PACKED_MALFORMED;
        if (!grow_room(&j->keys, 33 * (size_t)nin) || !grow_room(&j->xs, 32 * (size_t)nout)) return PACKED_NO_MEMORY;
        for (i = 0; i < nin; i++) {
            packed_input in;
            packed_bytes item = {NULL, 0};
            memset(&in, 0, sizeof in);
            if (!packed_take(&c, 32, &in.txid) || !packed_u32(&c, &in.vout) || !packed_var(&c, &in.script_sig) || !packed_u32(&c, &items))
                return PACKED_MALFORMED;
            in.witness_items = items;
            for (; items > 0; items--) {
                in.before_last = in.last;
                if (!packed_var(&c, &item)) return PACKED_MALFORMED;
                in.last = item;
            }
            if (!packed_var(&c, &in.spk)) return PACKED_MALFORMED;
            /* outpoint: the txid little-endian (Core prints it big-endian), then vout little-endian */
            for (k = 0; k < 32; k++) op[k] = in.txid[31 - k];
            op[32] = (unsigned char)in.vout;
            op[33] = (unsigned char)(in.vout >> 8);
            op[34] = (unsigned char)(in.vout >> 16);
            op[35] = (unsigned char)(in.vout >> 24);
            if (i == 0 || memcmp(op, best, 36) < 0) memcpy(best, op, 36);
            if (witness_version(&in.spk) > 1) unknown_segwit = 1;
            if (!unknown_segwit && input_key(&in, j->keys.b + j->keys.n + 33 * nk)) nk++;
        }
        for (i = 0; i < nout; i++) {
            if (!packed_take(&c, 4, &value) || !packed_take(&c, 8, &value) || !packed_take(&c, 34, &script)) return PACKED_MALFORMED;
            if (is_p2tr(script, 34)) memcpy(j->xs.b + j->xs.n + 32 * nx++, script + 2, 32);
        }
        if (nin == 0 || unknown_segwit || nk == 0 || nx == 0) continue; /* cannot pay anyone */
        if (!grow_room(&j->outpoints, 36) || !grow_room(&j->nkeys, 4) || !grow_room(&j->nxs, 4) || !grow_room(&j->offsets, 4))
            return PACKED_NO_MEMORY;
        j->keys.n = keys_at + 33 * nk;
        j->xs.n = xs_at + 32 * nx;
        memcpy(j->outpoints.b + j->outpoints.n, best, 36);
        j->outpoints.n += 36;
        ((uint32_t *)(void *)j->nkeys.b)[j->count] = (uint32_t)nk;
        ((uint32_t *)(void *)j->nxs.b)[j->count] = (uint32_t)nx;
        ((uint32_t *)(void *)j->offsets.b)[j->count] = offset;
        j->nkeys.n += 4;
        j->nxs.n += 4;
        j->offsets.n += 4;
        j->count++;
    }
    return 1;
}
