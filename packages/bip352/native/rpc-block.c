/*
 * A `getblock <hash> 3` answer of Bitcoin Core, read straight from its bytes into what a
 * silent-payment scanner needs (packBlockAnswer, src/block-answer.ts): no JavaScript string of
 * the ~5 MB body, no object graph for JSON.parse to build and the garbage collector to trace.
 *
 * It handles the answers a node sends for a block and nothing else. Anything it does not
 * expect (an error answer, another id, a field of an unexpected type or form, hex that is not
 * hex, a key written with escapes, a key twice in one object, JSON that is not valid) makes it
 * give up without a result, and the caller reads the answer with JSON.parse as before: every
 * answer it does not give up on gets the result the JSON.parse path gives (the tests compare
 * the two on real blocks and on thousands of altered ones).
 *
 * The packed transactions (the scan inputs of each transaction with a taproot output, in block
 * order), little-endian:
 *   txid (32) · inputs (u32) · outputs (u32)
 *   per input: txid (32) · vout (u32) · scriptSig (u32 length, bytes) · witness items (u32
 *     count, then each as u32 length, bytes) · prevout scriptPubKey (u32 length, bytes)
 *   per taproot output: n (u32) · value in BTC (f64) · scriptPubKey (34)
 * Hashes are kept in the order Core prints them (hex decoded as written).
 */
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct {
    const unsigned char *p, *end;
} cursor;

/* A string's bytes between its quotes (escapes not decoded). */
typedef struct {
    const unsigned char *s;
    size_t n;
} span;

typedef struct {
    unsigned char *b;
    size_t n, cap;
} outbuf;

/* What one vin entry holds, read before the transaction's outputs say whether it is packed. */
typedef struct {
    span txid;
    span vout;      /* the number's text */
    span script_sig; /* scriptSig.hex */
    span witness;   /* the array's text, '[' to ']' (its items checked to be strings) */
    span spk;       /* prevout.scriptPubKey.hex */
    span height;    /* prevout.height: the number's text */
    unsigned has_txid : 1, has_vout : 1, coinbase : 1, has_script_sig : 1, has_witness : 1, has_prevout : 1, has_height : 1;
} vin_rec;

typedef struct {
    span n, value, script;
} tap_rec;

typedef struct {
    cursor c;
    outbuf jobs, offsets, spends, taproot_spends, coinbase_keys;
    vin_rec *vins;
    size_t vin_cap;
    tap_rec *taps;
    size_t tap_cap;
} reader;

static signed char HEX[256];

static void init_hex(void) {
    int i;
    for (i = 0; i < 256; i++) HEX[i] = -1;
    for (i = 0; i < 10; i++) HEX['0' + i] = (signed char)i;
    for (i = 0; i < 6; i++) {
        HEX['a' + i] = (signed char)(10 + i);
        HEX['A' + i] = (signed char)(10 + i);
    }
}

/* ---- output ---------------------------------------------------------------------------- */

static int room(outbuf *o, size_t n) {
    size_t cap;
    unsigned char *b;
    if (o->n + n <= o->cap) return 1;
    cap = o->cap ? o->cap : 1 << 16;
    while (cap < o->n + n) cap *= 2;
    b = realloc(o->b, cap);
    if (b == NULL) return 0;
    o->b = b;
    o->cap = cap;
    return 1;
}

static void set_u32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static int put_u32(outbuf *o, uint32_t v) {
    if (!room(o, 4)) return 0;
    set_u32(o->b + o->n, v);
    o->n += 4;
    return 1;
}

static int put_bytes(outbuf *o, const void *bytes, size_t n) {
    if (!room(o, n)) return 0;
    memcpy(o->b + o->n, bytes, n);
    o->n += n;
    return 1;
}

/* Hex (either case, even length) decoded into o; 0 when it is not. */
static int put_hex(outbuf *o, span h) {
    size_t i;
    unsigned char *d;
    if (h.n % 2 != 0 || !room(o, h.n / 2)) return 0;
    d = o->b + o->n;
    for (i = 0; i < h.n; i += 2) {
        int hi = HEX[h.s[i]], lo = HEX[h.s[i + 1]];
        if ((hi | lo) < 0) return 0;
        *d++ = (unsigned char)(hi << 4 | lo);
    }
    o->n += h.n / 2;
    return 1;
}

/* u32 length, then the bytes of hex h. */
static int put_var_hex(outbuf *o, span h) {
    return put_u32(o, (uint32_t)(h.n / 2)) && put_hex(o, h); /* odd or not hex: put_hex refuses */
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void ws(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t')) c->p++;
}

static int eat(cursor *c, unsigned char ch) {
    ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

static int peek(cursor *c) {
    ws(c);
    return c->p < c->end ? *c->p : -1;
}

/* A JSON string; *plain = it has no escapes. 0 when it is not a valid string. */
static int str(cursor *c, span *out, int *plain) {
    const unsigned char *p;
    ws(c);
    if (c->p >= c->end || *c->p != '"') return 0;
    p = ++c->p;
    *plain = 1;
    while (p < c->end) {
        unsigned char ch = *p;
        if (ch == '"') {
            out->s = c->p;
            out->n = (size_t)(p - c->p);
            c->p = p + 1;
            return 1;
        }
        if (ch < 0x20) return 0;
        if (ch == '\\') {
            *plain = 0;
            if (++p >= c->end) return 0;
            ch = *p;
            if (ch == 'u') {
                int i;
                if (c->end - p < 5) return 0;
                for (i = 1; i <= 4; i++)
                    if (HEX[p[i]] < 0) return 0;
                p += 5;
                continue;
            }
            if (ch != '"' && ch != '\\' && ch != '/' && ch != 'b' && ch != 'f' && ch != 'n' && ch != 'r' && ch != 't') return 0;
        }
        p++;
    }
    return 0;
}

/* A string without escapes (keys and every value read here); 0 otherwise. */
static int plain_str(cursor *c, span *out) {
    int plain;
    return str(c, out, &plain) && plain;
}

/* A JSON number: its text. 0 when it is not one. */
static int num(cursor *c, span *out) {
    const unsigned char *p, *e = c->end;
    ws(c);
    p = c->p;
    if (p < e && *p == '-') p++;
    if (p >= e) return 0;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9')
        while (p < e && *p >= '0' && *p <= '9') p++;
    else return 0;
    if (p < e && *p == '.') {
        if (++p >= e || *p < '0' || *p > '9') return 0;
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || *p < '0' || *p > '9') return 0;
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    out->s = c->p;
    out->n = (size_t)(p - c->p);
    c->p = p;
    return 1;
}

static int literal(cursor *c, const char *word) {
    size_t n = strlen(word);
    ws(c);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return 0;
    c->p += n;
    return 1;
}

static int skip(cursor *c, int depth);

/* Members of an object: call with *first = 1 after '{'; 1 with the next key read and its ':'
   eaten, 0 at the closing '}' (eaten), -1 when the object is not valid or a key has escapes. */
static int member(cursor *c, int *first, span *key) {
    if (eat(c, '}')) return 0;
    if (*first) *first = 0;
    else if (!eat(c, ',')) return -1;
    if (!plain_str(c, key) || !eat(c, ':')) return -1;
    return 1;
}

/* Items of an array: call with *first = 1 after '['; 1 before the next item, 0 at ']' (eaten), -1 when not valid. */
static int item(cursor *c, int *first) {
    if (eat(c, ']')) return 0;
    if (*first) *first = 0;
    else if (!eat(c, ',')) return -1;
    return 1;
}

/* Any JSON value, skipped. */
static int skip(cursor *c, int depth) {
    span s;
    int plain, first = 1, r;
    if (depth > MAX_DEPTH) return 0;
    switch (peek(c)) {
    case '"':
        return str(c, &s, &plain);
    case '{':
        c->p++;
        while ((r = member(c, &first, &s)) == 1)
            if (!skip(c, depth + 1)) return 0;
        return r == 0;
    case '[':
        c->p++;
        while ((r = item(c, &first)) == 1)
            if (!skip(c, depth + 1)) return 0;
        return r == 0;
    case 't':
        return literal(c, "true");
    case 'f':
        return literal(c, "false");
    case 'n':
        return literal(c, "null");
    default:
        return num(c, &s);
    }
}

#define IS(key, lit) ((key).n == sizeof(lit) - 1 && memcmp((key).s, lit, sizeof(lit) - 1) == 0)
/* Marks a key as seen in its object; a key twice (JSON.parse keeps the last) is not handled. */
#define ONCE(seen, bit) \
    do { \
        if ((seen) & (bit)) return 0; \
        (seen) |= (bit); \
    } while (0)

/* The string at `path` (member names, NULL-ended) in the object at c, other members skipped:
   {"hex": …} for {"hex", NULL}, {"scriptPubKey": {"hex": …}} for {"scriptPubKey", "hex", NULL}. */
static int string_at(cursor *c, const char *const *path, int depth, span *out) {
    span key;
    int first = 1, r, seen = 0;
    size_t n = strlen(path[0]);
    if (!eat(c, '{')) return 0;
    while ((r = member(c, &first, &key)) == 1) {
        if (key.n == n && memcmp(key.s, path[0], n) == 0) {
            ONCE(seen, 1);
            if (!(path[1] == NULL ? plain_str(c, out) : string_at(c, path + 1, depth + 1, out))) return 0;
        } else if (!skip(c, depth)) return 0;
    }
    return r == 0 && seen;
}

static const char *const HEX_PATH[] = {"hex", NULL};

/* A prevout object: its scriptPubKey.hex (required) and its height (when there), others skipped. */
static int read_prevout(cursor *c, vin_rec *v) {
    span key;
    int first = 1, r, seen = 0;
    if (!eat(c, '{')) return 0;
    while ((r = member(c, &first, &key)) == 1) {
        if (IS(key, "scriptPubKey")) {
            ONCE(seen, 1);
            if (!string_at(c, HEX_PATH, 4, &v->spk)) return 0;
        } else if (IS(key, "height")) {
            ONCE(seen, 2);
            if (!num(c, &v->height)) return 0;
            v->has_height = 1;
        } else if (!skip(c, 4)) return 0;
    }
    return r == 0 && (seen & 1);
}

/* A non-negative integer below 2^32, as JSON.parse and a u32 write read it. */
static int u32_of(span n, uint32_t *v) {
    uint64_t x = 0;
    size_t i;
    if (n.n == 0 || n.n > 10 || (n.n > 1 && n.s[0] == '0')) return 0;
    for (i = 0; i < n.n; i++) {
        if (n.s[i] < '0' || n.s[i] > '9') return 0;
        x = x * 10 + (uint64_t)(n.s[i] - '0');
    }
    if (x > 0xFFFFFFFFULL) return 0;
    *v = (uint32_t)x;
    return 1;
}

/* An amount as Core prints it (digits, then at most 8 decimals) as JSON.parse reads it: the
   satoshis over 1e8 (both exact doubles, so the quotient is the double nearest the decimal). */
static int amount_of(span n, double *v) {
    uint64_t sats = 0;
    size_t i = 0, decimals = 0;
    int point = 0;
    if (n.n == 0 || n.n > 18 || n.s[0] < '0' || n.s[0] > '9') return 0;
    for (; i < n.n; i++) {
        unsigned char ch = n.s[i];
        if (ch == '.' && !point) point = 1;
        else if (ch >= '0' && ch <= '9') {
            sats = sats * 10 + (uint64_t)(ch - '0');
            if (point) decimals++;
        } else return 0;
    }
    if (decimals > 8) return 0;
    for (; decimals < 8; decimals++) sats *= 10;
    if (sats > (1ULL << 53)) return 0;
    *v = (double)sats / 1e8;
    return 1;
}

static int lower_hex64(span s) {
    size_t i;
    if (s.n != 64) return 0;
    for (i = 0; i < 64; i++)
        if (!((s.s[i] >= '0' && s.s[i] <= '9') || (s.s[i] >= 'a' && s.s[i] <= 'f'))) return 0;
    return 1;
}

/* ---- a block --------------------------------------------------------------------------- */

/* OP_1 OP_PUSHBYTES_32 <32 bytes> (BIP-341), as hex */
static int is_taproot_hex(span s) { return s.n == 68 && memcmp(s.s, "5120", 4) == 0; }

static int read_vin(cursor *c, vin_rec *v) {
    span key, s;
    int first = 1, r, seen = 0;
    memset(v, 0, sizeof(*v));
    if (!eat(c, '{')) return 0;
    while ((r = member(c, &first, &key)) == 1) {
        if (IS(key, "txid")) {
            ONCE(seen, 1);
            if (!plain_str(c, &v->txid)) return 0;
            v->has_txid = 1;
        } else if (IS(key, "vout")) {
            ONCE(seen, 2);
            if (!num(c, &v->vout)) return 0;
            v->has_vout = 1;
        } else if (IS(key, "coinbase")) {
            ONCE(seen, 4);
            if (!plain_str(c, &s)) return 0;
            v->coinbase = 1;
        } else if (IS(key, "scriptSig")) {
            ONCE(seen, 8);
            if (!string_at(c, HEX_PATH, 3, &v->script_sig)) return 0;
            v->has_script_sig = 1;
        } else if (IS(key, "txinwitness")) {
            int f = 1, ri;
            ONCE(seen, 16);
            ws(c);
            v->witness.s = c->p;
            if (!eat(c, '[')) return 0;
            while ((ri = item(c, &f)) == 1)
                if (!plain_str(c, &s)) return 0;
            if (ri != 0) return 0;
            v->witness.n = (size_t)(c->p - v->witness.s);
            v->has_witness = 1;
        } else if (IS(key, "prevout")) {
            ONCE(seen, 32);
            if (!read_prevout(c, v)) return 0;
            v->has_prevout = 1;
        } else if (!skip(c, 3)) return 0;
    }
    return r == 0;
}

/* A vout entry: its n, value and scriptPubKey.hex, kept when the script is a taproot one. */
static int read_vout(cursor *c, tap_rec *t, int *taproot) {
    span key;
    int first = 1, r, seen = 0;
    if (!eat(c, '{')) return 0;
    while ((r = member(c, &first, &key)) == 1) {
        if (IS(key, "n")) {
            ONCE(seen, 1);
            if (!num(c, &t->n)) return 0;
        } else if (IS(key, "value")) {
            ONCE(seen, 2);
            if (!num(c, &t->value)) return 0;
        } else if (IS(key, "scriptPubKey")) {
            ONCE(seen, 4);
            if (!string_at(c, HEX_PATH, 3, &t->script)) return 0;
        } else if (!skip(c, 3)) return 0;
    }
    if (r != 0 || !(seen & 4)) return 0;
    *taproot = is_taproot_hex(t->script);
    return !*taproot || (seen & 3) == 3;
}

static int grow(void **items, size_t *cap, size_t need, size_t size) {
    void *bigger;
    size_t n = *cap ? *cap : 16;
    if (need <= *cap) return 1;
    while (n < need) n *= 2;
    bigger = realloc(*items, n * size);
    if (bigger == NULL) return 0;
    *items = bigger;
    *cap = n;
    return 1;
}

/* "txid:vout,spender," for each input spending an outpoint. */
static int put_spend(outbuf *o, const vin_rec *v, span spender) {
    uint32_t vout;
    char text[12];
    int n;
    if (!lower_hex64(v->txid) || !u32_of(v->vout, &vout)) return 0;
    n = 0;
    do text[sizeof(text) - 1 - n++] = (char)('0' + vout % 10);
    while ((vout /= 10) > 0);
    return put_bytes(o, v->txid.s, 64) && put_bytes(o, ":", 1) && put_bytes(o, text + sizeof(text) - n, (size_t)n) &&
           put_bytes(o, ",", 1) && put_bytes(o, spender.s, 64) && put_bytes(o, ",", 1);
}

/* A taproot outpoint spent by `spender`: txid (32) · vout (u32) · the output's height (u32,
   NO_HEIGHT when the prevout has none) · spender's txid (32), hashes as printed. */
#define NO_HEIGHT 0xFFFFFFFFu
static int put_taproot_spend(outbuf *o, const vin_rec *v, span spender) {
    uint32_t vout, height;
    if (!u32_of(v->vout, &vout)) return 0;
    if (!v->has_height) height = NO_HEIGHT;
    else if (!u32_of(v->height, &height)) return 0; /* a height written otherwise: JSON.parse's reading decides */
    return put_hex(o, v->txid) && put_u32(o, vout) && put_u32(o, height) && put_hex(o, spender);
}

/* The x-only keys of the coinbase's taproot outputs (32 bytes each), each with a valid amount. */
static int put_coinbase_keys(reader *rd, size_t ntap) {
    size_t i;
    double value;
    for (i = 0; i < ntap; i++) {
        span x = {rd->taps[i].script.s + 4, 64};
        if (!amount_of(rd->taps[i].value, &value) || !put_hex(&rd->coinbase_keys, x)) return 0;
    }
    return 1;
}

/* One packed transaction (the format above). */
static int pack(reader *rd, span txid, size_t nvin, size_t ntap) {
    outbuf *o = &rd->jobs;
    size_t i;
    if (!put_u32(&rd->offsets, (uint32_t)o->n) || !put_hex(o, txid) || !put_u32(o, (uint32_t)nvin) || !put_u32(o, (uint32_t)ntap)) return 0;
    for (i = 0; i < nvin; i++) {
        const vin_rec *v = &rd->vins[i];
        uint32_t vout;
        if (!v->has_prevout || !v->has_txid || !v->has_vout || !u32_of(v->vout, &vout)) return 0;
        if (!put_hex(o, v->txid) || !put_u32(o, vout)) return 0;
        if (v->has_script_sig) {
            if (!put_var_hex(o, v->script_sig)) return 0;
        } else if (!put_u32(o, 0)) return 0;
        if (v->has_witness) {
            cursor w = {v->witness.s, v->witness.s + v->witness.n};
            size_t count_at = o->n;
            uint32_t count = 0;
            int f = 1, r;
            span s;
            eat(&w, '[');
            if (!put_u32(o, 0)) return 0;
            while ((r = item(&w, &f)) == 1) {
                if (!plain_str(&w, &s) || !put_var_hex(o, s)) return 0;
                count++;
            }
            set_u32(o->b + count_at, count);
        } else if (!put_u32(o, 0)) return 0;
        if (!put_var_hex(o, v->spk)) return 0;
    }
    for (i = 0; i < ntap; i++) {
        const tap_rec *t = &rd->taps[i];
        uint32_t n;
        double value;
        unsigned char le[8];
        uint64_t bits;
        int b;
        if (!u32_of(t->n, &n) || !amount_of(t->value, &value) || !put_u32(o, n)) return 0;
        memcpy(&bits, &value, 8);
        for (b = 0; b < 8; b++) le[b] = (unsigned char)(bits >> (8 * b));
        if (!put_bytes(o, le, 8) || !put_hex(o, t->script)) return 0;
    }
    return 1;
}

static int read_tx(reader *rd) {
    cursor *c = &rd->c;
    span key, txid = {NULL, 0};
    int first = 1, r, seen = 0, f, ri;
    size_t nvin = 0, ntap = 0, i;
    if (!eat(c, '{')) return 0;
    while ((r = member(c, &first, &key)) == 1) {
        if (IS(key, "txid")) {
            ONCE(seen, 1);
            if (!plain_str(c, &txid) || !lower_hex64(txid)) return 0;
        } else if (IS(key, "vin")) {
            ONCE(seen, 2);
            if (!(seen & 1) || !eat(c, '[')) return 0; /* Core prints txid first */
            f = 1;
            while ((ri = item(c, &f)) == 1) {
                if (!grow((void **)&rd->vins, &rd->vin_cap, nvin + 1, sizeof(vin_rec)) || !read_vin(c, &rd->vins[nvin])) return 0;
                if (rd->vins[nvin].has_txid || rd->vins[nvin].has_vout) {
                    if (!rd->vins[nvin].has_txid || !rd->vins[nvin].has_vout || !put_spend(&rd->spends, &rd->vins[nvin], txid)) return 0;
                    if (rd->vins[nvin].has_prevout && is_taproot_hex(rd->vins[nvin].spk) &&
                        !put_taproot_spend(&rd->taproot_spends, &rd->vins[nvin], txid))
                        return 0;
                }
                nvin++;
            }
            if (ri != 0) return 0;
        } else if (IS(key, "vout")) {
            ONCE(seen, 4);
            if (!(seen & 2) || !eat(c, '[')) return 0; /* and vin before vout */
            f = 1;
            while ((ri = item(c, &f)) == 1) {
                int taproot;
                if (!grow((void **)&rd->taps, &rd->tap_cap, ntap + 1, sizeof(tap_rec)) || !read_vout(c, &rd->taps[ntap], &taproot)) return 0;
                if (taproot) ntap++;
            }
            if (ri != 0) return 0;
        } else if (!skip(c, 2)) return 0;
    }
    if (r != 0 || seen != 7) return 0;
    for (i = 1; i < nvin; i++)
        if (rd->vins[i].coinbase) return 0; /* not a transaction Core prints */
    if (ntap == 0 || nvin == 0) return 1;
    if (rd->vins[0].coinbase) return put_coinbase_keys(rd, ntap);
    return pack(rd, txid, nvin, ntap);
}

typedef struct {
    span hash, prev, height, ntx;
    span version, merkleroot, time, bits, nonce; /* the header's other fields, when there */
    size_t txs;
    int has_prev, has_ntx, has_header;
} block_head;

static int read_block(reader *rd, block_head *h) {
    cursor *c = &rd->c;
    span key;
    int first = 1, r, seen = 0, f, ri;
    if (!eat(c, '{')) return 0;
    while ((r = member(c, &first, &key)) == 1) {
        if (IS(key, "hash")) {
            ONCE(seen, 1);
            if (!plain_str(c, &h->hash) || !lower_hex64(h->hash)) return 0;
        } else if (IS(key, "height")) {
            ONCE(seen, 2);
            if (!num(c, &h->height)) return 0;
        } else if (IS(key, "tx")) {
            ONCE(seen, 4);
            if (!eat(c, '[')) return 0;
            f = 1;
            while ((ri = item(c, &f)) == 1) {
                if (!read_tx(rd)) return 0;
                h->txs++;
            }
            if (ri != 0) return 0;
        } else if (IS(key, "previousblockhash")) {
            ONCE(seen, 8);
            if (!plain_str(c, &h->prev) || !lower_hex64(h->prev)) return 0;
            h->has_prev = 1;
        } else if (IS(key, "nTx")) {
            ONCE(seen, 16);
            if (!num(c, &h->ntx)) return 0;
            h->has_ntx = 1;
        } else if (IS(key, "version")) {
            ONCE(seen, 32);
            if (!num(c, &h->version)) return 0;
        } else if (IS(key, "merkleroot")) {
            ONCE(seen, 64);
            if (!plain_str(c, &h->merkleroot) || !lower_hex64(h->merkleroot)) return 0;
        } else if (IS(key, "time")) {
            ONCE(seen, 128);
            if (!num(c, &h->time)) return 0;
        } else if (IS(key, "bits")) {
            ONCE(seen, 256);
            if (!plain_str(c, &h->bits)) return 0;
        } else if (IS(key, "nonce")) {
            ONCE(seen, 512);
            if (!num(c, &h->nonce)) return 0;
        } else if (!skip(c, 2)) return 0;
    }
    h->has_header = (seen & 992) == 992;
    return r == 0 && (seen & 7) == 7;
}

/* The envelope {"result": block, "error": null, "id": rpcId} in any order, other members skipped. */
static int read_answer(reader *rd, block_head *h, const char *id, size_t id_len) {
    cursor *c = &rd->c;
    span key, s;
    int first = 1, r, seen = 0;
    if (!eat(c, '{')) return 0;
    while ((r = member(c, &first, &key)) == 1) {
        if (IS(key, "result")) {
            ONCE(seen, 1);
            if (!read_block(rd, h)) return 0;
        } else if (IS(key, "error")) {
            ONCE(seen, 2);
            if (!literal(c, "null")) return 0;
        } else if (IS(key, "id")) {
            ONCE(seen, 4);
            if (!plain_str(c, &s) || s.n != id_len || memcmp(s.s, id, id_len) != 0) return 0;
        } else if (!skip(c, 1)) return 0;
    }
    if (r != 0 || (seen & 5) != 5) return 0;
    ws(c);
    return c->p == c->end;
}

/* ---- N-API ----------------------------------------------------------------------------- */

#define NAPI_OK(call) \
    do { \
        if ((call) != napi_ok) goto done; \
    } while (0)

/* A JSON number's text as JSON.parse reads it (strtod rounds as it does); NULL on failure. */
static napi_value number_of(napi_env env, span n) {
    char text[32];
    napi_value v;
    if (n.n == 0 || n.n >= sizeof(text)) return NULL;
    memcpy(text, n.s, n.n);
    text[n.n] = 0;
    return napi_create_double(env, strtod(text, NULL), &v) == napi_ok ? v : NULL;
}

/* The header's fields other than the hashes read above: version, merkleroot, time, bits, nonce. */
static int set_header(napi_env env, napi_value block, const block_head *h) {
    napi_value field;
    if ((field = number_of(env, h->version)) == NULL || napi_set_named_property(env, block, "version", field) != napi_ok) return 0;
    if (napi_create_string_latin1(env, (const char *)h->merkleroot.s, 64, &field) != napi_ok ||
        napi_set_named_property(env, block, "merkleroot", field) != napi_ok)
        return 0;
    if ((field = number_of(env, h->time)) == NULL || napi_set_named_property(env, block, "time", field) != napi_ok) return 0;
    if (napi_create_string_latin1(env, (const char *)h->bits.s, h->bits.n, &field) != napi_ok ||
        napi_set_named_property(env, block, "bits", field) != napi_ok)
        return 0;
    return (field = number_of(env, h->nonce)) != NULL && napi_set_named_property(env, block, "nonce", field) == napi_ok;
}

static napi_value array_buffer(napi_env env, const outbuf *o) {
    napi_value ab;
    void *data;
    if (napi_create_arraybuffer(env, o->n, &data, &ab) != napi_ok) return NULL;
    if (o->n > 0) memcpy(data, o->b, o->n);
    return ab;
}

/*
 * packBlockAnswer(body: Uint8Array, rpcId: string) -> { hash, height, previousblockhash, nTx,
 * spends: "txid:vout,spender,…" (a trailing comma), jobs: ArrayBuffer, offsets: ArrayBuffer
 * (u32 each), taprootSpends: ArrayBuffer (72 bytes each, put_taproot_spend), coinbaseKeys:
 * ArrayBuffer (32 bytes each), and, when the block has them all, version, merkleroot, time, bits,
 * nonce } | undefined when the answer is not one it handles (see the top of this file).
 */
napi_value bip352_pack_block_answer(napi_env env, napi_callback_info info) {
    size_t argc = 2, length, id_len;
    napi_value argv[2], result = NULL, value;
    bool is_typed;
    napi_typedarray_type type;
    void *data;
    napi_value arraybuffer;
    size_t offset;
    char id[256];
    reader rd;
    block_head h;
    uint32_t height, ntx;
    memset(&rd, 0, sizeof(rd));
    memset(&h, 0, sizeof(h));
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
    if (argc < 2 || napi_is_typedarray(env, argv[0], &is_typed) != napi_ok || !is_typed ||
        napi_get_typedarray_info(env, argv[0], &type, &length, &data, &arraybuffer, &offset) != napi_ok || type != napi_uint8_array) {
        napi_throw_type_error(env, NULL, "packBlockAnswer(body: Uint8Array, rpcId: string)");
        return NULL;
    }
    if (napi_get_value_string_utf8(env, argv[1], id, sizeof(id), &id_len) != napi_ok) {
        napi_throw_type_error(env, NULL, "packBlockAnswer(body: Uint8Array, rpcId: string)");
        return NULL;
    }
    if (id_len >= sizeof(id) - 1) goto done; /* maybe cut: leave it to JSON.parse */
    rd.c.p = data != NULL ? data : (const unsigned char *)"";
    rd.c.end = rd.c.p + length;
    if (!read_answer(&rd, &h, id, id_len) || !u32_of(h.height, &height)) goto done;
    if (!h.has_ntx) ntx = (uint32_t)h.txs;
    else if (!u32_of(h.ntx, &ntx)) goto done;
    NAPI_OK(napi_create_object(env, &value));
    {
        napi_value field;
        NAPI_OK(napi_create_string_latin1(env, (const char *)h.hash.s, 64, &field));
        NAPI_OK(napi_set_named_property(env, value, "hash", field));
        NAPI_OK(napi_create_uint32(env, height, &field));
        NAPI_OK(napi_set_named_property(env, value, "height", field));
        if (h.has_prev) NAPI_OK(napi_create_string_latin1(env, (const char *)h.prev.s, 64, &field));
        else NAPI_OK(napi_get_undefined(env, &field));
        NAPI_OK(napi_set_named_property(env, value, "previousblockhash", field));
        NAPI_OK(napi_create_uint32(env, ntx, &field));
        NAPI_OK(napi_set_named_property(env, value, "nTx", field));
        NAPI_OK(napi_create_string_latin1(env, rd.spends.n ? (const char *)rd.spends.b : "", rd.spends.n, &field));
        NAPI_OK(napi_set_named_property(env, value, "spends", field));
        if ((field = array_buffer(env, &rd.jobs)) == NULL) goto done;
        NAPI_OK(napi_set_named_property(env, value, "jobs", field));
        if ((field = array_buffer(env, &rd.offsets)) == NULL) goto done;
        NAPI_OK(napi_set_named_property(env, value, "offsets", field));
        if ((field = array_buffer(env, &rd.taproot_spends)) == NULL) goto done;
        NAPI_OK(napi_set_named_property(env, value, "taprootSpends", field));
        if ((field = array_buffer(env, &rd.coinbase_keys)) == NULL) goto done;
        NAPI_OK(napi_set_named_property(env, value, "coinbaseKeys", field));
        if (h.has_header && !set_header(env, value, &h)) goto done;
    }
    result = value;
done:
    free(rd.jobs.b);
    free(rd.offsets.b);
    free(rd.spends.b);
    free(rd.taproot_spends.b);
    free(rd.coinbase_keys.b);
    free(rd.vins);
    free(rd.taps);
    if (result == NULL) {
        bool pending = false;
        napi_is_exception_pending(env, &pending);
        if (!pending) napi_get_undefined(env, &result);
    }
    return result;
}

void bip352_rpc_block_init(void) { init_hex(); }
