/*
 * BIP-352 scanning of one transaction in one call (or of many: scan_many, whose runs of eight
 * share their inversions, and their multiplications and exponentiations go eight at a time where
 * the CPU allows, ecmult-lanes.h), on libsecp256k1's own field and group arithmetic (the library
 * source that the `secp256k1` npm package ships, compiled here as one translation unit so that
 * its internal functions are reachable).
 *
 * Why internals and not the public API: every public call that returns a point pays a field
 * inversion to make it affine, and every call that takes a compressed key a square root. The
 * scan needs at most two inversions per transaction (A and the ECDH point, because both are
 * hashed in compressed form; A needs none when it is a single input key) and one square root
 * per input key (a single key's shares the ECDH point's inversion: one_key_begin/end); everything
 * after the ECDH stays
 * in Jacobian coordinates: x(P) == x_o is tested as X == x_o * Z^2. And t_k*G uses a
 * variable-time comb over a table of 32 x 255 affine points (8-bit windows, no doublings)
 * instead of the constant-time, blinded generator multiplication: t_k is a per-output value,
 * not a key (see README "Side channels").
 *
 * Semantics are those of receiver.ts (which the BIP-352 test vectors check on all backends):
 * for k = 0, 1, ... while outputs remain and k < k_max: the first remaining output (in order)
 * equal to P_k (x only) is taken; else the first remaining output equal to P_k + L_m for some
 * label m; no match ends the scan.
 */
#include <node_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "secp256k1.c"
#include "pow-p3d4.h"

/* ------------------------------------------------------------------------------------------ */
/* Process-wide tables, built once. */

static secp256k1_context *ctx;                 /* its ecmult tables serve the ECDH */
static secp256k1_ge_storage (*comb)[256];      /* comb[i][j] = j * 256^i * G (j >= 1) */
static secp256k1_sha256 tag_inputs, tag_shared; /* SHA256(tag) || SHA256(tag) absorbed */
static int lanes;                               /* ECMULT_LANES when scan_many multiplies in lanes, else 0 */

static void comb_mul(secp256k1_gej *r, const unsigned char *s32);

#include "ecmult-lanes.h"

static void tagged_midstate(secp256k1_sha256 *h, const char *tag) {
    unsigned char th[32];
    secp256k1_sha256 t;
    secp256k1_sha256_initialize(&t);
    secp256k1_sha256_write(&t, (const unsigned char *)tag, strlen(tag));
    secp256k1_sha256_finalize(&t, th);
    secp256k1_sha256_initialize(h);
    secp256k1_sha256_write(h, th, 32);
    secp256k1_sha256_write(h, th, 32);
}

static void build_tables(void) {
    secp256k1_gej base, *jac;
    secp256k1_ge *aff;
    int i, j, d;
    jac = malloc(sizeof(secp256k1_gej) * 255);
    aff = malloc(sizeof(secp256k1_ge) * 255);
    comb = malloc(sizeof(secp256k1_ge_storage) * 32 * 256);
    if (jac == NULL || aff == NULL || comb == NULL) {
        free(jac);
        free(aff);
        free(comb);
        comb = NULL;
        return;
    }
    secp256k1_gej_set_ge(&base, &secp256k1_ge_const_g);
    for (i = 0; i < 32; i++) {
        jac[0] = base;
        for (j = 1; j < 255; j++) secp256k1_gej_add_var(&jac[j], &jac[j - 1], &base, NULL);
        secp256k1_ge_set_all_gej_var(aff, jac, 255);
        for (j = 0; j < 255; j++) secp256k1_ge_to_storage(&comb[i][j + 1], &aff[j]);
        for (d = 0; d < 8; d++) secp256k1_gej_double_var(&base, &base, NULL);
    }
    free(jac);
    free(aff);
    tagged_midstate(&tag_inputs, "BIP0352/Inputs");
    tagged_midstate(&tag_shared, "BIP0352/SharedSecret");
    ctx = secp256k1_context_create(SECP256K1_CONTEXT_VERIFY);
#if ECMULT_LANES
    lanes = ecmult_lanes_available() && lanes_comb_table() ? ECMULT_LANES : 0;
#endif
}

/* Builds the tables once per process, whichever thread (worker_threads) loads the addon first. */
static int init_tables(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_tables);
    return ctx != NULL && comb != NULL;
}

/* r = s*G for a 32-byte big-endian scalar, variable time (one mixed addition per non-zero byte). */
static void comb_mul(secp256k1_gej *r, const unsigned char *s32) {
    secp256k1_ge p;
    int i;
    secp256k1_gej_set_infinity(r);
    for (i = 0; i < 32; i++) {
        unsigned int b = s32[31 - i];
        if (b == 0) continue;
        secp256k1_ge_from_storage(&p, &comb[i][b]);
        secp256k1_gej_add_ge_var(r, r, &p, NULL);
    }
}


/* ------------------------------------------------------------------------------------------ */
/* One exponentiation for an inverse and a square root (the label search's lifts ride on the
   inversions the scan pays anyway). */

/* r = a^(2^n); r may be a. */
static void fe_sqr_n(secp256k1_fe *r, const secp256k1_fe *a, int n) {
    *r = *a;
    while (n-- > 0) secp256k1_fe_sqr(r, r);
}

/* r = a^((p-3)/4) (pow-p3d4.h); r not a. */
static void fe_pow_p3d4(secp256k1_fe *r, const secp256k1_fe *a) {
    POW_P3D4_CHAIN(secp256k1_fe, fe_sqr_n, secp256k1_fe_mul, r, a);
}

/* w = u v^2: what fe_inv_and_sqrt raises to (p-3)/4 (scan_many raises eight at once). */
static void inv_sqrt_base(secp256k1_fe *w, const secp256k1_fe *v, const secp256k1_fe *u) {
    secp256k1_fe_sqr(w, v);
    secp256k1_fe_mul(w, w, u);
}

/* Whether y is a square root of u (u of magnitude 1); when it is, y normalized and made even. */
static int fe_root_check(secp256k1_fe *y, const secp256k1_fe *u) {
    secp256k1_fe t;
    secp256k1_fe_sqr(&t, y);
    secp256k1_fe_normalize_weak(&t);
    if (!secp256k1_fe_equal_var(&t, u)) return 0;
    secp256k1_fe_normalize_var(y);
    if (secp256k1_fe_is_odd(y)) {
        secp256k1_fe_negate(y, y, 1);
        secp256k1_fe_normalize_var(y);
    }
    return 1;
}

/* fe_inv_and_sqrt from s = (u v^2)^((p-3)/4). */
static int inv_sqrt_finish(secp256k1_fe *inv, secp256k1_fe *y, const secp256k1_fe *v, const secp256k1_fe *u, const secp256k1_fe *s) {
    secp256k1_fe t;
    secp256k1_fe_mul(&t, s, v);
    secp256k1_fe_mul(y, &t, u);  /* u s v */
    secp256k1_fe_mul(inv, y, s); /* u s^2 v */
    if (fe_root_check(y, u)) return 1;
    secp256k1_fe_negate(inv, inv, 1);
    secp256k1_fe_normalize_weak(inv);
    return 0;
}

/*
 * inv = 1/v and, when u is a square, y = its square root with even parity (returns 1; else 0,
 * inv still right), for the price of one exponentiation: s = (u v^2)^((p-3)/4) gives
 * s^2 = chi(u) / (u v^2), so u s v is a square root of u when chi(u) = 1 and u s^2 v = chi(u) / v.
 * u and v non-zero (u = x^3 + 7 never is on this curve; v is a Z coordinate or a product of them).
 */
static int fe_inv_and_sqrt(secp256k1_fe *inv, secp256k1_fe *y, const secp256k1_fe *v, const secp256k1_fe *u) {
    secp256k1_fe w, s;
    inv_sqrt_base(&w, v, u);
    fe_pow_p3d4(&s, &w);
    return inv_sqrt_finish(inv, y, v, u, &s);
}

/* u = x^3 + 7 */
static void curve_rhs(secp256k1_fe *u, const secp256k1_fe *x) {
    secp256k1_fe x2, seven;
    secp256k1_fe_sqr(&x2, x);
    secp256k1_fe_mul(u, &x2, x);
    secp256k1_fe_set_int(&seven, 7);
    secp256k1_fe_add(u, &seven);
    secp256k1_fe_normalize_weak(u);
}

/* y (even) with y^2 = x^3 + 7, from pow = (x^3 + 7)^((p-3)/4) (raised elsewhere: scan_many's
   pow_queue), as u pow; 0 when x is on no point. y may be pow. */
static int root_from_pow(secp256k1_fe *y, const secp256k1_fe *x, const secp256k1_fe *pow) {
    secp256k1_fe u;
    curve_rhs(&u, x);
    secp256k1_fe_mul(y, pow, &u); /* y may be pow: fe_mul's output may be its first operand */
    return fe_root_check(y, &u);
}

/* ------------------------------------------------------------------------------------------ */
/* A variable-time field inversion by divsteps (Bernstein and Yang, "Fast constant-time gcd
   computation and modular inversion", 2019, in the variable-time form that libsecp256k1 0.2+
   uses), written for this scanner: the library version it compiles (2019) inverts by
   exponentiation, ~270 field operations. Used where an inversion shares nothing with a square
   root (the label search's batch). Checked against the exponentiation by `inverseSelfTest`.

   Numbers are 5 limbs of 62 bits, least significant first, limbs 0-3 in [0, 2^62) and limb 4
   signed. f = p and g = x start; each round runs 62 divsteps on the low 62 bits only, which
   gives a matrix [u v; q r] with 2^62 (f', g') = (u f + v g, q f + r g), applied to the whole f,
   g and to d, e, where f = d x and g = e x (mod p) at every round (d = 0, e = 1 to start; the
   division by 2^62 mod p adds the multiple of p that clears the low 62 bits). When g = 0,
   f = +-1, and 1/x = +-d.

   It needs 128-bit integers and __builtin_ctzll (GCC and Clang on 64-bit targets); elsewhere
   (MSVC, 32-bit) fe_inv_fast is the library's exponentiation, as before. */

#if defined(__SIZEOF_INT128__)

#define M62 (UINT64_MAX >> 2)

typedef struct { int64_t v[5]; } s62;

static const s62 P62 = {{0x3FFFFFFEFFFFFC2FLL, 0x3FFFFFFFFFFFFFFFLL, 0x3FFFFFFFFFFFFFFFLL, 0x3FFFFFFFFFFFFFFFLL, 0xFF}};
static const uint64_t p_inv62 = 0x27C7F6E22DDACACFULL; /* 1/p mod 2^62 */

static void s62_from_b32(s62 *r, const unsigned char *b) {
    uint64_t w[4];
    int i, j;
    for (i = 0; i < 4; i++) { /* w[0] least significant */
        w[i] = 0;
        for (j = 0; j < 8; j++) w[i] = (w[i] << 8) | b[31 - 8 * i - 7 + j];
    }
    r->v[0] = (int64_t)(w[0] & M62);
    r->v[1] = (int64_t)(((w[0] >> 62) | (w[1] << 2)) & M62);
    r->v[2] = (int64_t)(((w[1] >> 60) | (w[2] << 4)) & M62);
    r->v[3] = (int64_t)(((w[2] >> 58) | (w[3] << 6)) & M62);
    r->v[4] = (int64_t)(w[3] >> 56);
}

/* a in [0, 2^256) */
static void s62_to_b32(unsigned char *b, const s62 *a) {
    uint64_t w[4];
    int i, j;
    w[0] = (uint64_t)a->v[0] | ((uint64_t)a->v[1] << 62);
    w[1] = ((uint64_t)a->v[1] >> 2) | ((uint64_t)a->v[2] << 60);
    w[2] = ((uint64_t)a->v[2] >> 4) | ((uint64_t)a->v[3] << 58);
    w[3] = ((uint64_t)a->v[3] >> 6) | ((uint64_t)a->v[4] << 56);
    for (i = 0; i < 4; i++)
        for (j = 0; j < 8; j++) b[31 - 8 * i - j] = (unsigned char)(w[i] >> (8 * j));
}

/* a += sign * p, sign = +-1; limbs 0-3 carried back into [0, 2^62) (they may start out of it). */
static void s62_add_p(s62 *a, int sign) {
    int64_t carry = 0;
    int i;
    for (i = 0; i < 4; i++) {
        int64_t t = a->v[i] + sign * P62.v[i] + carry;
        a->v[i] = t & (int64_t)M62;
        carry = t >> 62;
    }
    a->v[4] += sign * P62.v[4] + carry;
}

static int s62_at_least_p(const s62 *a) {
    int i;
    for (i = 4; i >= 0; i--) {
        if (a->v[i] != P62.v[i]) return a->v[i] > P62.v[i];
    }
    return 1;
}

/* a into [0, p), from within a few multiples of p. */
static void s62_reduce(s62 *a) {
    while (a->v[4] < 0) s62_add_p(a, 1);
    while (s62_at_least_p(a)) s62_add_p(a, -1);
}

/* 62 divsteps on the low bits of f (odd) and g; returns the new eta (= -delta), sets t. */
static int64_t divsteps_62_var(int64_t eta, uint64_t f, uint64_t g, int64_t t[4]) {
    uint64_t u = 1, v = 0, q = 0, r = 1, w, m, tmp;
    int i = 62, limit, zeros;
    for (;;) {
        zeros = __builtin_ctzll(g | (UINT64_MAX << i));
        g >>= zeros;
        u <<= zeros;
        v <<= zeros;
        eta -= zeros;
        i -= zeros;
        if (i == 0) break;
        /* g is odd: swap when delta > 0, as the divstep does */
        if (eta < 0) {
            eta = -eta;
            tmp = f; f = g; g = -tmp;
            tmp = u; u = q; q = -tmp;
            tmp = v; v = r; r = -tmp;
        }
        /* clear up to min(eta + 1, i, 6) low bits of g with a multiple of f: the divsteps that
           would add f one bit at a time, done at once (1/f mod 64 = f (2 - f^2)) */
        limit = ((int)eta + 1) > i ? i : ((int)eta + 1);
        m = (UINT64_MAX >> (64 - limit)) & 63U;
        w = (f * g * (f * f - 2)) & m;
        g += f * w;
        q += u * w;
        r += v * w;
    }
    t[0] = (int64_t)u;
    t[1] = (int64_t)v;
    t[2] = (int64_t)q;
    t[3] = (int64_t)r;
    return eta;
}

/* (a, b) = ([u v; q r] (a, b) + (ma, mb) p) / 2^62, exactly: ma, mb clear the low 62 bits (0 for
   f and g, whose low bits the divsteps cleared; d and e take the multiples of p that do). */
static void apply_matrix(s62 *a, s62 *b, const int64_t t[4], uint64_t ma, uint64_t mb) {
    __int128 ca = 0, cb = 0;
    int i;
    for (i = 0; i < 5; i++) {
        ca += (__int128)t[0] * a->v[i] + (__int128)t[1] * b->v[i] + (__int128)ma * P62.v[i];
        cb += (__int128)t[2] * a->v[i] + (__int128)t[3] * b->v[i] + (__int128)mb * P62.v[i];
        if (i > 0) {
            a->v[i - 1] = (int64_t)ca & (int64_t)M62;
            b->v[i - 1] = (int64_t)cb & (int64_t)M62;
        }
        ca >>= 62;
        cb >>= 62;
    }
    a->v[4] = (int64_t)ca;
    b->v[4] = (int64_t)cb;
}

/* The multiple of p (mod 2^62) that makes u a + v b + m p divisible by 2^62. */
static uint64_t clearing_multiple(int64_t u, int64_t v, const s62 *a, const s62 *b) {
    return (0 - ((uint64_t)u * (uint64_t)a->v[0] + (uint64_t)v * (uint64_t)b->v[0])) * p_inv62 & M62;
}

/* r = 1/a (0 for 0), variable time; a of any magnitude. */
static void fe_inv_fast(secp256k1_fe *r, const secp256k1_fe *a) {
    s62 f = P62, g, d = {{0, 0, 0, 0, 0}}, e = {{1, 0, 0, 0, 0}};
    secp256k1_fe n = *a;
    unsigned char b[32];
    int64_t eta = -1, t[4];
    int i;
    secp256k1_fe_normalize_var(&n);
    secp256k1_fe_get_b32(b, &n);
    s62_from_b32(&g, b);
    while (g.v[0] | g.v[1] | g.v[2] | g.v[3] | g.v[4]) {
        eta = divsteps_62_var(eta, (uint64_t)f.v[0], (uint64_t)g.v[0], t);
        apply_matrix(&d, &e, t, clearing_multiple(t[0], t[1], &d, &e), clearing_multiple(t[2], t[3], &d, &e));
        s62_reduce(&d); /* from [-p, 2p): d, e in [0, p), |u| + |v| <= 2^62, m < 2^62 */
        s62_reduce(&e);
        apply_matrix(&f, &g, t, 0, 0);
    }
    /* g = 0: f = +-gcd = +-1 (or +-p when a = 0, where d = 0); 1/a = -d = p - d when f = -1 */
    if (f.v[4] < 0) {
        for (i = 0; i < 5; i++) d.v[i] = -d.v[i];
        s62_add_p(&d, 1); /* carries the negated limbs back into range: p - d in (0, p] */
        s62_reduce(&d);
    }
    s62_to_b32(b, &d);
    secp256k1_fe_set_b32(r, b);
}

#else

static void fe_inv_fast(secp256k1_fe *r, const secp256k1_fe *a) { secp256k1_fe_inv_var(r, a); }

#endif

/* ge = the affine form of a (not infinity), lifting output o (even y) in the same exponentiation. */
static int affine_lifting(secp256k1_ge *ge, const secp256k1_gej *a, secp256k1_ge *o) {
    secp256k1_fe u, zi;
    int ok;
    curve_rhs(&u, &o->x);
    ok = fe_inv_and_sqrt(&zi, &o->y, &a->z, &u);
    secp256k1_ge_set_gej_zinv(ge, a, &zi);
    o->infinity = 0;
    return ok;
}

/* ------------------------------------------------------------------------------------------ */
/* A receiver's spend keys: B_spend (label -1) and B_m = B_spend + L_m (label = the caller's slot). */

typedef struct {
    secp256k1_ge point; /* affine, normalized */
    int32_t label;
} spend_key;

typedef struct {
    secp256k1_scalar scan;
    spend_key *keys; /* keys[0] = B_spend */
    size_t count, cap;
    uint64_t *table; /* open addressing on x_key: (tag: its top 32 bits) << 32 | (index into keys + 1), 0 empty */
    size_t table_size;
    uint64_t *filter; /* one bit a table slot, the bit each key's tag selects set (filter_bit): table_find_x */
    int32_t infinite_label; /* the label whose B_m is the point at infinity (L_m = -B_spend), or -2 */
    int tweaked;            /* during a scanMany(..., tweaked) call: each transaction's one key is its tweak
                               input_hash * A (a row of a tweak index), and s = b_scan */
    unsigned char *out; /* scratch for results */
    size_t out_cap;
} scanner;

/* Hash of a normalized x: its low bits straight from the limbs (any bits of x are uniform). */
static uint64_t x_key(const secp256k1_fe *x_normalized) {
#ifdef USE_FIELD_5X52
    return x_normalized->n[0] ^ (x_normalized->n[1] << 12);
#else
    return (uint64_t)x_normalized->n[0] | ((uint64_t)x_normalized->n[1] << 26) | ((uint64_t)x_normalized->n[2] << 52);
#endif
}

static uint64_t table_entry(uint64_t key, size_t index) {
    return (key & 0xffffffff00000000ULL) | (uint64_t)(index + 1);
}

/* The filter's bit for key: from its tag bits, which the slot does not use. */
static size_t filter_bit(const scanner *sc, uint64_t key) {
    return (size_t)(key >> 32) & (sc->table_size - 1);
}

static void table_insert(scanner *sc, size_t index) {
    uint64_t key = x_key(&sc->keys[index].point.x);
    size_t mask = sc->table_size - 1, slot = (size_t)key & mask, bit = filter_bit(sc, key);
    while (sc->table[slot] != 0) slot = (slot + 1) & mask;
    sc->table[slot] = table_entry(key, index);
    sc->filter[bit / 64] |= (uint64_t)1 << (bit % 64);
}

/* size: a power of two, 64 at least. */
static int table_rebuild(scanner *sc, size_t size) {
    uint64_t *t = calloc(size, sizeof(uint64_t)), *f = calloc(size / 64, sizeof(uint64_t));
    size_t i;
    if (t == NULL || f == NULL) {
        free(t);
        free(f);
        return 0;
    }
    free(sc->table);
    free(sc->filter);
    sc->table = t;
    sc->filter = f;
    sc->table_size = size;
    for (i = 0; i < sc->count; i++) table_insert(sc, i);
    return 1;
}

/* The spend key whose x equals x (normalized), or NULL. Nearly every x probed is no key's (two
   candidates an output at each k), and the filter turns most of them away: one bit a slot, each
   key setting the bit its tag selects, so at most half of the bits are set (with 100,000 labels
   about a third), in 1/64 of the table's bytes (32 KB against 2 MB with 100,000 labels: 262,144
   slots; docs/performance/bip352.md, "Kept"). The tag in each entry
   rejects the other keys of a probe without reading them. */
static const spend_key *table_find_x(const scanner *sc, const secp256k1_fe *x) {
    uint64_t key = x_key(x), tag = key & 0xffffffff00000000ULL, e;
    size_t mask = sc->table_size - 1, slot = (size_t)key & mask, bit = filter_bit(sc, key);
    if (!(sc->filter[bit / 64] >> (bit % 64) & 1)) return NULL;
    while ((e = sc->table[slot]) != 0) {
        if ((e & 0xffffffff00000000ULL) == tag) {
            const spend_key *k = &sc->keys[(e & 0xffffffffULL) - 1];
            if (secp256k1_fe_equal_var(&k->point.x, x)) return k;
        }
        slot = (slot + 1) & mask;
    }
    return NULL;
}

static int scanner_add(scanner *sc, const secp256k1_ge *point, int32_t label) {
    if (sc->count == sc->cap) {
        size_t cap = sc->cap == 0 ? 8 : sc->cap * 2;
        spend_key *keys = realloc(sc->keys, sizeof(spend_key) * cap);
        if (keys == NULL) return 0;
        sc->keys = keys;
        sc->cap = cap;
    }
    sc->keys[sc->count].point = *point;
    secp256k1_fe_normalize_var(&sc->keys[sc->count].point.x);
    secp256k1_fe_normalize_var(&sc->keys[sc->count].point.y);
    sc->keys[sc->count].label = label;
    sc->count++;
    if (2 * sc->count > sc->table_size) return table_rebuild(sc, sc->table_size == 0 ? 64 : sc->table_size * 4);
    table_insert(sc, sc->count - 1);
    return 1;
}

static void scanner_free(napi_env env, void *data, void *hint) {
    scanner *sc = data;
    (void)env;
    (void)hint;
    secp256k1_scalar_clear(&sc->scan);
    free(sc->keys);
    free(sc->table);
    free(sc->filter);
    free(sc->out);
    free(sc);
}

/* ------------------------------------------------------------------------------------------ */
/* The scan. */

#define MATCH_BYTES 44 /* u32 output position, u32 k, i32 label (-1: none), t_k (32 bytes) */
#define SCAN_NOT_ELIGIBLE (-1)
#define SCAN_BAD_INPUT_HASH (-2)
#define SCAN_BAD_TK (-3)
#define SCAN_NO_MEMORY (-4)

/* Rough costs in ns of the two searches (see chooseStrategy in receiver.ts). */
#define COST_ADD 300
#define COST_CMP 60
#define COST_SQRT 5500
#define COST_INV 5500
#define COST_LOOKUP 500 /* per output and k: the x of O - T and -O - T (~12 field multiplications), two probes */

static void put_u32(unsigned char *p, uint32_t v) {
    p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}

static int scalar_from(secp256k1_scalar *s, const unsigned char *b32) {
    int overflow;
    secp256k1_scalar_set_b32(s, b32, &overflow);
    return !overflow && !secp256k1_scalar_is_zero(s);
}

/* The label of a spend key B with B = c (affine, x normalized), or -2 when there is none. */
static int32_t label_of(const scanner *sc, const secp256k1_fe *x, const secp256k1_fe *y_unnormalized) {
    const spend_key *key = table_find_x(sc, x);
    secp256k1_fe y;
    if (key == NULL) return -2;
    y = *y_unnormalized;
    secp256k1_fe_normalize_var(&y);
    return secp256k1_fe_equal_var(&y, &key->point.y) ? key->label : -2;
}

/* O - T (len 0) and -O - T (len 1) the plain way, for an output with x(O) == x(T). */
static int32_t label_slow(const scanner *sc, const secp256k1_gej *t, const secp256k1_ge *o, int len) {
    secp256k1_gej r, tneg;
    secp256k1_ge p;
    secp256k1_gej_neg(&tneg, t);
    if (len == 0) secp256k1_gej_add_ge_var(&r, &tneg, o, NULL);
    else secp256k1_gej_add_ge_var(&r, t, o, NULL); /* O + T = -(-O - T) */
    if (secp256k1_gej_is_infinity(&r)) return sc->infinite_label == -2 ? -2 : sc->infinite_label;
    secp256k1_ge_set_gej_var(&p, &r);
    secp256k1_fe_normalize_var(&p.x);
    if (len == 1) secp256k1_fe_negate(&p.y, &p.y, 1);
    return label_of(sc, &p.x, &p.y);
}

/* The first remaining output whose x is x(T + B_spend), in *best; 0 when none. */
static int spend_first(const scanner *sc, const secp256k1_gej *t, const secp256k1_fe *x, const unsigned char *state, size_t m, size_t *best) {
    secp256k1_gej r;
    size_t j;
    secp256k1_gej_add_ge_var(&r, t, &sc->keys[0].point, NULL);
    if (secp256k1_gej_is_infinity(&r)) return 0;
    for (j = 0; j < m; j++) {
        if (!(state[j] & 1) && secp256k1_gej_eq_x_var(&x[j], &r)) {
            *best = j;
            return 1;
        }
    }
    return 0;
}

/* Cost of the search over outputs at one k: square roots of the outputs not yet lifted (one of
   them rides on the inversion, free), the inversion when none does, and the lookups. */
static uint64_t outputs_cost(size_t unlifted, size_t remaining) {
    return (unlifted > 0 ? (uint64_t)(unlifted - 1) * COST_SQRT : COST_INV) + (uint64_t)remaining * COST_LOOKUP;
}

/* s = input_hash * b_scan, input_hash = hash_BIP0352/Inputs(outpoint || A) (with `fixed`, those
   32 bytes instead; a tweaked scanner's A is input_hash * A already, and s = b_scan); 0 when
   input_hash is not a valid scalar. */
static int ecdh_scalar(secp256k1_scalar *s, const scanner *sc, const unsigned char *outpoint, const unsigned char *a33,
                       const unsigned char *fixed) {
    unsigned char hash[32];
    if (sc->tweaked) {
        *s = sc->scan; /* the key is input_hash * A already */
        return 1;
    }
    if (fixed) {
        memcpy(hash, fixed, 32);
    } else {
        secp256k1_sha256 h = tag_inputs;
        secp256k1_sha256_write(&h, outpoint, 36);
        secp256k1_sha256_write(&h, a33, 33);
        secp256k1_sha256_finalize(&h, hash);
    }
    if (!scalar_from(s, hash)) return 0;
    secp256k1_scalar_mul(s, s, &sc->scan);
    return 1;
}

/* The search by the outputs at one k (lookup_prepare): T's z^2 and z^3, how many
   outputs' E went into the product (st->pre[count - 1]), and the output whose lift rides on its
   inversion (fold), or SIZE_MAX. */
typedef struct {
    secp256k1_fe z2, z3;
    size_t count, fold;
} lookup_plan;

/* A transaction's scan between its two halves (scan_begin, scan_end): the per-output arrays,
   and the multiplication left to do, s * a, which scan_tx does at once and scan_many in runs. */
typedef struct {
    void *block;
    secp256k1_ge *lifted;
    secp256k1_fe *x, *dd, *ee, *pre;
    size_t *index;
    unsigned char *state; /* per output: 1 taken; 2 lifted (or known not liftable); 4 not liftable; 8 x(O) == x(T) at this k;
                             16 its square root waiting in scan_many's queue (2 set already) */
    size_t m, remaining, prelift;
    int one_key;          /* one_key_begin's path: a is the key's image P', t = x^3 + 7, odd = its prefix is 03 */
    int odd;
    secp256k1_fe t;
    secp256k1_ge a;
    secp256k1_scalar s;
    int lift_outputs;     /* scan_begin's in_run: the caller lifts the outputs (all with state 0) in its lanes */
    /* keys_defer (scan_many, several input keys): the keys (33 bytes each) and the outpoint, read
       again by keys_sum and keys_hash; per key, x^3 + 7, then its power from the run (ky), and
       whether it is no key at all (kbad); the sum when A is left to the run's inversion */
    const unsigned char *keys, *outpoint;
    size_t nkeys;
    secp256k1_fe *ky;
    unsigned char *kbad;
    secp256k1_gej acc;
    int a_pending;        /* keys_sum: A is st->acc, waiting for the run's inversion */
    /* scan_many: the lookups of k = 0 prepared (lookup_prepare) and 1 / the product of their E,
       from the run's exponentiations (with the square root of the fold output, x^3 + 7 in k0_u)
       or else from the run's inversion */
    lookup_plan k0;
    secp256k1_fe k0_inv, k0_u;
    int k0_ready;
    unsigned char ecdh33[33]; /* from scan_shared on: the ECDH point compressed, and t_0's hash */
    unsigned char hash0[32];
} tx_scan;

/*
 * The ECDH point of a transaction with one input key: one exponentiation where the general path
 * pays two (the key's square root when it is parsed, then the inversion of the ECDH point). With
 * t = x^3 + 7 for the key's x and u = its y (u^2 = t), the point P' = (x t, t^2) is the image of
 * the key P under the isomorphism (x, y) -> (u^2 x, u^3 y) onto y^2 = x^3 + 7 t^3, a curve of the
 * same shape (a = 0: the doubling and addition formulas never read b, and the endomorphism
 * (beta x, y) holds there too), so s P' = (x' : y' : Z') maps back to
 * s P = (x' / (Z'^2 t), y' / (Z'^3 t u)). Both u (the square root of t, with the key's parity)
 * and 1 / (Z' t) then come from one fe_inv_and_sqrt; 1/Z' = t / (Z' t), 1/t = Z' / (Z' t), and
 * 1/u = u / t. A key whose x is not on the curve shows only there: the transaction is then not
 * eligible, as when the general path cannot parse its only key. A's serialization, hashed into
 * input_hash, is the key as given (02 or 03, then x), which is what a parse would serialize.
 * one_key_begin leaves s P' to do; one_key_end takes r = s P'. Each returns 0, or a negative
 * SCAN_* code.
 */
static int one_key_begin(const scanner *sc, tx_scan *st, const unsigned char *key, const unsigned char *outpoint,
                         const unsigned char *fixed) {
    secp256k1_fe x;
    if ((key[0] != 2 && key[0] != 3) || !secp256k1_fe_set_b32(&x, key + 1)) return SCAN_NOT_ELIGIBLE;
    if (!ecdh_scalar(&st->s, sc, outpoint, key, fixed)) return SCAN_BAD_INPUT_HASH;
    curve_rhs(&st->t, &x); /* never 0: -7 is not a cube mod p */
    secp256k1_fe_mul(&st->a.x, &x, &st->t);
    secp256k1_fe_sqr(&st->a.y, &st->t);
    st->a.infinity = 0;
    st->odd = key[0] == 3;
    st->one_key = 1;
    return 0;
}

/* The base one_key_end raises to (p-3)/4 for r (not infinity): w = t (Z' t)^2. */
static void one_key_pow_base(const tx_scan *st, const secp256k1_gej *r, secp256k1_fe *w) {
    secp256k1_fe v;
    secp256k1_fe_mul(&v, &r->z, &st->t);
    inv_sqrt_base(w, &v, &st->t);
}

/* With pow, that power already raised (one_key_pow_base, then (p-3)/4); else raised here. */
static int one_key_end(tx_scan *st, secp256k1_gej *r, secp256k1_ge *ecdh, const secp256k1_fe *pow) {
    secp256k1_fe v, inv, u, zi, zi2, ti, ui;
    const secp256k1_fe *t = &st->t;
    int ok;
    if (secp256k1_gej_is_infinity(r)) return SCAN_NOT_ELIGIBLE; /* s = 0 mod n: not reachable */
    secp256k1_fe_mul(&v, &r->z, t);
    ok = pow != NULL ? inv_sqrt_finish(&inv, &u, &v, t, pow) : fe_inv_and_sqrt(&inv, &u, &v, t);
    if (!ok) return SCAN_NOT_ELIGIBLE; /* x is not on the curve */
    if (st->odd) {
        secp256k1_fe_negate(&u, &u, 1);
        secp256k1_fe_normalize_var(&u);
    }
    secp256k1_fe_mul(&zi, &inv, t);     /* 1/Z' */
    secp256k1_fe_mul(&ti, &inv, &r->z); /* 1/t */
    secp256k1_fe_mul(&ui, &u, &ti);     /* 1/u */
    secp256k1_fe_sqr(&zi2, &zi);
    secp256k1_fe_mul(&ecdh->x, &r->x, &zi2);
    secp256k1_fe_mul(&ecdh->x, &ecdh->x, &ti);
    secp256k1_fe_mul(&zi2, &zi2, &zi);  /* 1/Z'^3 */
    secp256k1_fe_mul(&ecdh->y, &r->y, &zi2);
    secp256k1_fe_mul(&ecdh->y, &ecdh->y, &ti);
    secp256k1_fe_mul(&ecdh->y, &ecdh->y, &ui);
    ecdh->infinity = 0;
    return 0;
}

/* A (affine) into st->a, and st->s = input_hash * b_scan with A compressed; 0, or SCAN_BAD_INPUT_HASH. */
static int keys_hash(const scanner *sc, tx_scan *st, secp256k1_ge *a, const unsigned char *outpoint, const unsigned char *fixed) {
    unsigned char a33[33];
    size_t len = 33;
    secp256k1_eckey_pubkey_serialize(a, a33, &len, 1);
    st->a = *a;
    st->one_key = 0;
    return ecdh_scalar(&st->s, sc, outpoint, a33, fixed) ? 0 : SCAN_BAD_INPUT_HASH;
}

/*
 * The ECDH point of a transaction with n input keys (invalid ones skipped), affine in ge:
 * A = their sum, one inversion to hash A compressed (none when only one key is valid: it is
 * affine already), the multiplication, one inversion for the ECDH point. With st->prelift, the
 * two inversions each lift the next remaining output in the same exponentiation (st->state,
 * st->lifted). keys_begin leaves s A to do; keys_end takes r = s A. Each returns 0, or a negative
 * SCAN_* code.
 */
static int keys_begin(const scanner *sc, tx_scan *st, const unsigned char *keys, size_t n, const unsigned char *outpoint,
                      const unsigned char *fixed) {
    secp256k1_gej acc;
    secp256k1_ge ge, first;
    size_t i, j;
    int any = 0;
    secp256k1_gej_set_infinity(&acc);
    for (i = 0; i < n; i++) {
        if (!secp256k1_eckey_pubkey_parse(&ge, keys + 33 * i, 33)) continue;
        secp256k1_gej_add_ge_var(&acc, &acc, &ge, NULL);
        if (any++ == 0) first = ge;
    }
    if (!any || secp256k1_gej_is_infinity(&acc)) return SCAN_NOT_ELIGIBLE;
    /* A affine (1 inversion), lifting the first remaining output with it */
    for (j = 0; j < st->m && (st->state[j] & 3); j++) {}
    if (st->prelift > 0 && j < st->m) {
        st->state[j] |= 2 | (affine_lifting(&ge, &acc, &st->lifted[j]) ? 0 : 4);
        st->prelift--;
    } else if (any == 1) {
        ge = first; /* one valid key: A is that key, already affine (no inversion) */
    } else {
        secp256k1_ge_set_gej_var(&ge, &acc);
    }
    return keys_hash(sc, st, &ge, outpoint, fixed);
}

/* With zinv, 1 / Z of r already computed (scan_many: one inversion for the run). */
static int keys_end(tx_scan *st, secp256k1_gej *r, secp256k1_ge *ecdh, const secp256k1_fe *zinv) {
    size_t j;
    if (zinv != NULL) {
        secp256k1_ge_set_gej_zinv(ecdh, r, zinv);
        return 0;
    }
    /* the ECDH point affine (1 inversion), lifting the next remaining output with it */
    for (j = 0; j < st->m && (st->state[j] & 3); j++) {}
    if (st->prelift > 0 && j < st->m && !secp256k1_gej_is_infinity(r)) {
        st->state[j] |= 2 | (affine_lifting(ecdh, r, &st->lifted[j]) ? 0 : 4);
    } else {
        secp256k1_ge_set_gej_var(ecdh, r);
    }
    return 0;
}

/*
 * keys_begin in three steps for scan_many, so that a run of transactions shares the costly
 * parts: the keys' square roots go eight at a time (pow_queue) and the inversions of the run's
 * A (and later of its ECDH points) are one (fe_inv_many). keys_defer notes which keys can be
 * keys at all (prefix 02 or 03, x < p) and leaves x^3 + 7 in st->ky for the run to raise;
 * keys_sum checks each root and adds the keys (0, or SCAN_NOT_ELIGIBLE), leaving A in st->a
 * when one key is valid or in st->acc for the run to invert (st->a_pending); keys_hash then
 * hashes A. The same answers as keys_begin.
 */
static void keys_defer(tx_scan *st, const unsigned char *keys, size_t n, const unsigned char *outpoint) {
    secp256k1_fe x;
    size_t i;
    st->keys = keys;
    st->nkeys = n;
    st->outpoint = outpoint;
    st->one_key = 0;
    st->a_pending = 0;
    for (i = 0; i < n; i++) {
        const unsigned char *key = keys + 33 * i;
        st->kbad[i] = (key[0] != 2 && key[0] != 3) || !secp256k1_fe_set_b32(&x, key + 1);
        if (!st->kbad[i]) curve_rhs(&st->ky[i], &x);
    }
}

static int keys_sum(tx_scan *st) {
    secp256k1_gej acc;
    secp256k1_ge ge, first;
    size_t i;
    int any = 0;
    secp256k1_gej_set_infinity(&acc);
    for (i = 0; i < st->nkeys; i++) {
        const unsigned char *key = st->keys + 33 * i;
        if (st->kbad[i]) continue;
        secp256k1_fe_set_b32(&ge.x, key + 1);
        if (!root_from_pow(&ge.y, &ge.x, &st->ky[i])) continue; /* x on no point: no key */
        if (key[0] == 3) {
            secp256k1_fe_negate(&ge.y, &ge.y, 1);
            secp256k1_fe_normalize_var(&ge.y);
        }
        ge.infinity = 0;
        secp256k1_gej_add_ge_var(&acc, &acc, &ge, NULL);
        if (any++ == 0) first = ge;
    }
    if (!any || secp256k1_gej_is_infinity(&acc)) return SCAN_NOT_ELIGIBLE;
    if (any == 1) st->a = first; /* A is that key, already affine */
    else st->acc = acc;
    st->a_pending = any > 1;
    return 0;
}

/*
 * A transaction's scan in two halves around its one variable-base multiplication, so that
 * scan_many can do the multiplications of several transactions together (ecmult-lanes.h).
 * scan_begin: keys: n compressed keys (33 bytes each, invalid ones skipped); outpoint: the
 * smallest outpoint (36 bytes); xs: m x-only output keys (32 bytes each). Returns 0 with
 * st->s * st->a left to do, or a negative SCAN_* code (nothing left to free). With `fixed` (the
 * benchmark's tight loop), every hash is replaced by those 32 bytes: the same elliptic-curve
 * work, no hashing. With in_run (scan_many), the run does what transactions can share: it lifts
 * the outputs to look up (eight square roots at once), and of a transaction with several keys it
 * takes the keys' square roots and A's inversion too (keys_defer: st->a and st->s are then left
 * to the run).
 *
 * Two searches, chosen per k by their cost: x(T + B) for each spend key B against each output
 * (few keys), or for each output O the x of O - T and -O - T looked up among the spend keys
 * (many labels: BIP-352, "Scanning", labels; the cost follows the outputs, not the labels).
 * The second needs each output lifted (a square root) and one inversion per k; each inversion
 * the scan pays anyway (A, the ECDH point, the batch of the lookups) lifts one output in the same
 * exponentiation (fe_inv_and_sqrt), so for the common 2-output transaction labels cost only
 * field multiplications.
 */
static int scan_begin(const scanner *sc, tx_scan *st, const unsigned char *keys, size_t n, const unsigned char *outpoint,
                      const unsigned char *xs, size_t m, const unsigned char *fixed, int in_run) {
    size_t j, nk = in_run && n > 1 ? n : 0; /* keys deferred to the run */
    int result;
    /* one block for the per-output and per-key arrays (largest alignment first) */
    st->block = malloc((sizeof(secp256k1_ge) + sizeof(secp256k1_fe) * 4 + sizeof(size_t) + 1) * (m + 1) + (sizeof(secp256k1_fe) + 1) * nk);
    if (st->block == NULL) return SCAN_NO_MEMORY;
    st->lifted = st->block;
    st->x = (secp256k1_fe *)(st->lifted + (m + 1));
    st->dd = st->x + (m + 1);
    st->ee = st->dd + (m + 1);
    st->pre = st->ee + (m + 1);
    st->ky = st->pre + (m + 1);
    st->index = (size_t *)(st->ky + nk);
    st->state = (unsigned char *)(st->index + (m + 1));
    st->kbad = st->state + (m + 1);
    st->nkeys = 0;
    st->k0_ready = 0;
    st->m = m;
    st->remaining = 0;
    st->prelift = 0;
    memset(st->state, 0, m + 1);
    for (j = 0; j < m; j++) {
        if (secp256k1_fe_set_b32(&st->x[j], xs + 32 * j)) {
            st->lifted[j].x = st->x[j];
            st->remaining++;
        } else {
            st->state[j] = 1; /* x >= p: no point, pays no one */
        }
    }
    /* Many spend keys: the two inversions of the ECDH lift the first two outputs for free; or,
       in a run, the run lifts every output (scan_many: eight square roots at once). */
    st->lift_outputs = 0;
    if ((uint64_t)sc->count * (COST_ADD + st->remaining * COST_CMP) > outputs_cost(st->remaining > 2 ? st->remaining - 2 : 0, st->remaining)) {
        if (in_run) st->lift_outputs = 1;
        else st->prelift = 2;
    }
    /* One key: A is that key, and its square root can wait. */
    if (nk > 0) {
        keys_defer(st, keys, n, outpoint);
        result = 0;
    } else {
        result = n == 1 && st->prelift == 0 ? one_key_begin(sc, st, keys, outpoint, fixed) : keys_begin(sc, st, keys, n, outpoint, fixed);
    }
    if (result < 0) {
        free(st->block);
        st->block = NULL;
    }
    return result;
}

/* The ECDH point from r = st->s * st->a, affine, then compressed (st->ecdh33), and the hash of
   t_0 (st->hash0); pow: one_key_end's power, already raised, or NULL; zinv: keys_end's 1 / Z,
   already computed, or NULL. Returns 0, or a negative SCAN_* code (st's arrays then freed). */
static int scan_shared(tx_scan *st, secp256k1_gej *product, const unsigned char *fixed, const secp256k1_fe *pow, const secp256k1_fe *zinv) {
    secp256k1_ge ge;
    size_t len = 33;
    int result = st->one_key ? one_key_end(st, product, &ge, pow) : keys_end(st, product, &ge, zinv);
    if (result < 0) {
        free(st->block);
        st->block = NULL;
        return result;
    }
    secp256k1_eckey_pubkey_serialize(&ge, st->ecdh33, &len, 1);
    if (fixed) {
        memcpy(st->hash0, fixed, 32);
    } else {
        static const unsigned char zero[4] = {0, 0, 0, 0};
        secp256k1_sha256 h = tag_shared;
        secp256k1_sha256_write(&h, st->ecdh33, 33);
        secp256k1_sha256_write(&h, zero, 4);
        secp256k1_sha256_finalize(&h, st->hash0);
    }
    return 0;
}

/* Whether the k loop of scan_outputs will run at all (and need t_0 G). */
static int scan_needs_t0(const tx_scan *st, uint32_t k_max) {
    return k_max > 0 && st->remaining > 0;
}

/*
 * The search by the outputs at one k, in three steps (scan_many does the first for its run's
 * transactions, then one inversion for all of them). For each remaining output O (even y) with
 * T = (X, Y, Z) in Jacobian coordinates: D = x(O) Z^2 - X, E = Z D, so x(O) - x(T) = D / Z^2; the
 * slopes from O to -T and to T are (y(O) Z^3 +- Y) / E, and x(T) = X (D / E)^2. The E of all
 * outputs are inverted together (prefix products), and that inversion lifts one output not yet
 * lifted (its E needs only x(O)). Then x(O - T) and x(-O - T) = x(O + T) are looked up among the
 * spend keys (O - T = B, or -O - T = B), y checked on a hit.
 */
static void lookup_prepare(tx_scan *st, secp256k1_gej *t, lookup_plan *plan) {
    secp256k1_fe nx;
    secp256k1_fe *x = st->x, *dd = st->dd, *ee = st->ee, *pre = st->pre;
    unsigned char *state = st->state;
    size_t j, count = 0, fold = SIZE_MAX;
    secp256k1_fe_normalize_weak(&t->x);
    secp256k1_fe_normalize_weak(&t->y);
    secp256k1_fe_normalize_weak(&t->z);
    secp256k1_fe_sqr(&plan->z2, &t->z);
    secp256k1_fe_mul(&plan->z3, &plan->z2, &t->z);
    secp256k1_fe_negate(&nx, &t->x, 1);
    for (j = 0; j < st->m; j++) {
        if (state[j] & 1) continue;
        if (!(state[j] & 2)) {
            if (fold == SIZE_MAX) {
                fold = j;
            } else {
                state[j] |= 2;
                if (!secp256k1_ge_set_xo_var(&st->lifted[j], &x[j], 0)) state[j] |= 4;
            }
        }
        if (state[j] & 4) continue;
        secp256k1_fe_mul(&dd[count], &x[j], &plan->z2);
        secp256k1_fe_add(&dd[count], &nx);
        secp256k1_fe_mul(&ee[count], &dd[count], &t->z);
        state[j] &= ~8;
        if (secp256k1_fe_normalizes_to_zero_var(&ee[count])) {
            state[j] |= 8; /* x(O) == x(T): the plain way below */
            secp256k1_fe_set_int(&ee[count], 1);
        }
        if (count == 0) pre[0] = ee[0];
        else secp256k1_fe_mul(&pre[count], &pre[count - 1], &ee[count]);
        st->index[count++] = j;
    }
    plan->count = count;
    plan->fold = fold;
}

/* inv = 1 / the product of the E (st->pre[count - 1]), lifting the fold output on the way. */
static void lookup_invert(tx_scan *st, const lookup_plan *plan, secp256k1_fe *inv) {
    size_t fold = plan->fold, count = plan->count;
    if (fold != SIZE_MAX) {
        secp256k1_fe u;
        curve_rhs(&u, &st->x[fold]);
        if (count > 0) {
            if (!fe_inv_and_sqrt(inv, &st->lifted[fold].y, &st->pre[count - 1], &u)) st->state[fold] |= 4;
        } else if (!secp256k1_ge_set_xo_var(&st->lifted[fold], &st->x[fold], 0)) {
            st->state[fold] |= 4;
        }
        st->lifted[fold].infinity = 0;
        st->state[fold] |= 2;
    } else if (count > 0) {
        fe_inv_fast(inv, &st->pre[count - 1]); /* shares nothing: divsteps, ~4x the exponentiation's speed */
    }
}

/* The lookups, from inv (lookup_invert's); the match in *best and *best_label (kept when none). */
static void lookup_finish(const scanner *sc, tx_scan *st, const secp256k1_gej *t, const lookup_plan *plan, const secp256k1_fe *inv_in,
                          size_t *best, int32_t *best_label) {
    secp256k1_fe inv = *inv_in, tmp, xt, yoz3, lambda, xc, yc;
    secp256k1_fe *dd = st->dd, *ee = st->ee, *pre = st->pre;
    const secp256k1_ge *lifted = st->lifted;
    const unsigned char *state = st->state;
    size_t i, j, len, count = plan->count;
    int hit_unlabelled = 0, have_xt = 0;
    /* ee[i] becomes 1 / E_i */
    for (i = count; i-- > 0;) {
        tmp = ee[i];
        if (i > 0) secp256k1_fe_mul(&ee[i], &inv, &pre[i - 1]);
        else ee[i] = inv;
        secp256k1_fe_mul(&inv, &inv, &tmp);
    }
    for (i = 0; i < count && !hit_unlabelled; i++) {
        j = st->index[i];
        if (state[j] & 4) continue; /* the folded output was not liftable after all */
        if (!(state[j] & 8)) {
            if (!have_xt) {
                secp256k1_fe_mul(&tmp, &dd[i], &ee[i]); /* 1 / Z = D / E */
                secp256k1_fe_sqr(&tmp, &tmp);
                secp256k1_fe_mul(&xt, &t->x, &tmp);
                have_xt = 1;
            }
            secp256k1_fe_mul(&yoz3, &lifted[j].y, &plan->z3);
        }
        for (len = 0; len < 2; len++) {
            int32_t label;
            if (state[j] & 8) {
                label = label_slow(sc, t, &lifted[j], (int)len);
            } else {
                secp256k1_fe num = yoz3, sum;
                if (len == 0) secp256k1_fe_add(&num, &t->y); /* O to -T */
                else {
                    secp256k1_fe_negate(&tmp, &t->y, 1);
                    secp256k1_fe_add(&num, &tmp); /* O to T */
                }
                secp256k1_fe_mul(&lambda, &num, &ee[i]);
                secp256k1_fe_sqr(&xc, &lambda);
                sum = xt;
                secp256k1_fe_add(&sum, &lifted[j].x);
                secp256k1_fe_negate(&sum, &sum, 2);
                secp256k1_fe_add(&xc, &sum);
                secp256k1_fe_normalize_var(&xc);
                if (table_find_x(sc, &xc) == NULL) continue;
                /* y of O + (-T) or of O + T: lambda (x(O) - xc) - y(O); -O - T = -(O + T) */
                secp256k1_fe_negate(&tmp, &xc, 1);
                secp256k1_fe_add(&tmp, &lifted[j].x);
                secp256k1_fe_mul(&yc, &lambda, &tmp);
                secp256k1_fe_negate(&tmp, &lifted[j].y, 1);
                secp256k1_fe_add(&yc, &tmp);
                if (len == 1) {
                    secp256k1_fe_normalize_weak(&yc);
                    secp256k1_fe_negate(&yc, &yc, 1);
                }
                label = label_of(sc, &xc, &yc);
            }
            if (label == -2) continue;
            if (label == -1) {
                *best = j;
                *best_label = -1;
                hit_unlabelled = 1;
                break;
            }
            if (*best == SIZE_MAX) {
                *best = j;
                *best_label = label;
            }
        }
    }
}

/* From this many remaining outputs (a transaction paying the receiver again and again), the search
   by the outputs tries x(T + B_spend) first: an unlabelled match wins, and it is the cheap test. */
#define SPEND_FIRST_FROM 16

/* Whether the search at this k goes by the spend keys (x(T + B) against each output) rather than
   by the outputs, by their costs. The outputs of a transaction whose run lifts them (lift_outputs)
   count as lifted: their square roots are raised eight at a time with the others of the run. */
static int search_by_keys(const scanner *sc, const tx_scan *st, size_t remaining) {
    size_t j, unlifted = 0;
    if (!st->lift_outputs) for (j = 0; j < st->m; j++) if (!(st->state[j] & 3)) unlifted++;
    return (uint64_t)sc->count * (COST_ADD + remaining * COST_CMP) <= outputs_cost(unlifted, remaining);
}

/* The outputs, k by k, after scan_shared; with t0, t_0 G already computed (else comb_mul).
   Writes up to m matches to out (MATCH_BYTES each); frees st's arrays. Returns the number of
   matches, or a negative SCAN_* code. */
static int scan_outputs(const scanner *sc, tx_scan *st, uint32_t k_max, const unsigned char *fixed, unsigned char *out,
                        const secp256k1_gej *t0) {
    secp256k1_gej r, t;
    secp256k1_fe *x = st->x;
    unsigned char *state = st->state;
    size_t m = st->m, remaining = st->remaining;
    secp256k1_scalar tweak;
    unsigned char hash[32], ser_k[4];
    const unsigned char *ecdh33 = st->ecdh33;
    size_t i, j, found = 0;
    int result, prepared;
    uint32_t k;

    for (k = 0; k < k_max && remaining > 0; k++) {
        size_t best = SIZE_MAX;
        int32_t best_label = -1;
        if (k == 0) {
            memcpy(hash, st->hash0, 32);
        } else if (fixed) {
            memcpy(hash, fixed, 32);
        } else {
            secp256k1_sha256 h = tag_shared;
            put_u32(ser_k, k);
            secp256k1_sha256_write(&h, ecdh33, 33);
            secp256k1_sha256_write(&h, ser_k, 4);
            secp256k1_sha256_finalize(&h, hash);
        }
        if (!scalar_from(&tweak, hash)) {
            result = SCAN_BAD_TK;
            goto done;
        }
        if (k == 0 && t0 != NULL) t = *t0;
        else comb_mul(&t, hash);
        /* the lookups of k = 0 that scan_many prepared (it chose the search by the outputs) */
        prepared = k == 0 && st->k0_ready;

        if (!prepared && search_by_keys(sc, st, remaining)) {
            /* x(T + B) against every remaining output: B_spend first (an unlabelled match wins),
               then each B_m, keeping the first output in order */
            for (i = 0; i < sc->count; i++) {
                secp256k1_gej_add_ge_var(&r, &t, &sc->keys[i].point, NULL);
                if (secp256k1_gej_is_infinity(&r)) continue;
                for (j = 0; j < m && j < best; j++) {
                    if (!(state[j] & 1) && secp256k1_gej_eq_x_var(&x[j], &r)) {
                        best = j;
                        best_label = sc->keys[i].label;
                        break;
                    }
                }
                if (i == 0 && best != SIZE_MAX) break;
            }
            if (sc->infinite_label != -2 && !(best != SIZE_MAX && best_label == -1) && !secp256k1_gej_is_infinity(&t)) {
                /* B_m = infinity: P_k + L_m = T */
                for (j = 0; j < m && j < best; j++) {
                    if (!(state[j] & 1) && secp256k1_gej_eq_x_var(&x[j], &t)) {
                        best = j;
                        best_label = sc->infinite_label;
                        break;
                    }
                }
            }
        } else if (!prepared && remaining >= SPEND_FIRST_FROM && spend_first(sc, &t, x, state, m, &best)) {
            /* many outputs (a transaction paying this receiver again and again): an unlabelled
               match wins, and x(T + B_spend) against each output is the cheap test */
            best_label = -1;
        } else {
            lookup_plan plan;
            secp256k1_fe inv;
            if (prepared) {
                plan = st->k0;
                inv = st->k0_inv;
            } else {
                lookup_prepare(st, &t, &plan);
                lookup_invert(st, &plan, &inv);
            }
            lookup_finish(sc, st, &t, &plan, &inv, &best, &best_label);
        }
        if (best == SIZE_MAX) break;
        state[best] |= 1;
        remaining--;
        put_u32(out + MATCH_BYTES * found, (uint32_t)best);
        put_u32(out + MATCH_BYTES * found + 4, k);
        put_u32(out + MATCH_BYTES * found + 8, (uint32_t)best_label);
        memcpy(out + MATCH_BYTES * found + 12, hash, 32);
        found++;
    }
    result = (int)found;
done:
    free(st->block);
    st->block = NULL;
    return result;
}

/* The rest of a transaction's scan from r = st->s * st->a (scan_shared, then scan_outputs). */
static int scan_end(const scanner *sc, tx_scan *st, secp256k1_gej *product, uint32_t k_max, const unsigned char *fixed,
                    unsigned char *out) {
    int result = scan_shared(st, product, fixed, NULL, NULL);
    return result < 0 ? result : scan_outputs(sc, st, k_max, fixed, out, NULL);
}

/*
 * Scans one transaction. keys: n compressed keys (33 bytes each, invalid ones skipped);
 * outpoint: the smallest outpoint (36 bytes); xs: m x-only output keys (32 bytes each).
 * Writes up to m matches to sc->out. With `fixed` (the benchmark's tight loop), every hash is
 * replaced by those 32 bytes: the same elliptic-curve work, no hashing.
 * Returns the number of matches, or a negative SCAN_* code.
 */
static int scan_tx(scanner *sc, const unsigned char *keys, size_t n, const unsigned char *outpoint,
                   const unsigned char *xs, size_t m, uint32_t k_max, const unsigned char *fixed) {
    tx_scan st;
    secp256k1_gej acc, r;
    int result = scan_begin(sc, &st, keys, n, outpoint, xs, m, fixed, 0);
    if (result < 0) return result;
    /* one variable-base multiplication: (input_hash * b_scan) * A */
    secp256k1_gej_set_ge(&acc, &st.a);
    secp256k1_ecmult(&ctx->ecmult_ctx, &r, &acc, &st.s, NULL);
    secp256k1_scalar_clear(&st.s);
    return scan_end(sc, &st, &r, k_max, fixed, sc->out);
}

/* Below this many transactions waiting for their multiplication (or powers to raise), the lanes
   (whose cost is that of eight) are not worth it: one by one. */
#define LANES_FROM 3

/* Transactions scan_many takes at a time: they share their multiplications (the lanes), their
   powers (the lanes) and their inversions (one for the run). */
#define RUN_MAX 8

/* r[i] = 1 / a[i] for i < n (none zero), with one inversion for all of them (prefix products,
   then back: 3 multiplications each); r not a. */
static void fe_inv_many(secp256k1_fe *r, const secp256k1_fe *a, size_t n) {
    secp256k1_fe inv;
    size_t i;
    if (n == 0) return;
    r[0] = a[0];
    for (i = 1; i < n; i++) secp256k1_fe_mul(&r[i], &r[i - 1], &a[i]);
    fe_inv_fast(&inv, &r[n - 1]);
    for (i = n - 1; i > 0; i--) {
        secp256k1_fe_mul(&r[i], &r[i - 1], &inv); /* a[0..i-1] / a[0..i] */
        secp256k1_fe_mul(&inv, &inv, &a[i]);      /* 1 / a[0..i-1] */
    }
    r[0] = inv;
}

/* Elements to raise to (p-3)/4, in place, up to sixteen at a time in the lanes (fewer than
   LANES_FROM, or no lanes: one by one). pow_push queues one (flushing when full), pow_flush raises
   the rest. */
#define POW_QUEUE_MAX (2 * RUN_MAX)
#if ECMULT_LANES
_Static_assert(POW_QUEUE_MAX <= POW_LANES, "a flush raises the whole queue in one exponentiation");
#endif
typedef struct {
    secp256k1_fe *at[POW_QUEUE_MAX];
    secp256k1_fe value[POW_QUEUE_MAX];
    size_t count;
} pow_queue;

static void pow_flush(pow_queue *q) {
    size_t i;
#if ECMULT_LANES
    if (lanes && q->count >= LANES_FROM) {
        fe_pow_p3d4_lanes(q->value, q->value, (int)q->count);
        for (i = 0; i < q->count; i++) *q->at[i] = q->value[i];
        q->count = 0;
        return;
    }
#endif
    for (i = 0; i < q->count; i++) fe_pow_p3d4(q->at[i], &q->value[i]); /* not in place: fe_mul must not write to its second operand */
    q->count = 0;
}

static void pow_push(pow_queue *q, secp256k1_fe *at) {
    q->value[q->count] = *at;
    q->at[q->count] = at;
    if (++q->count == POW_QUEUE_MAX) pow_flush(q);
}

/* Output j of st lifted (even y) from its power in lifted[j].y (pow_push of x^3 + 7); an x on no
   point is marked not liftable, as secp256k1_ge_set_xo_var would find. */
static void lift_output_from(tx_scan *st, size_t j) {
    st->state[j] |= 2;
    if (!root_from_pow(&st->lifted[j].y, &st->x[j], &st->lifted[j].y)) st->state[j] |= 4;
    st->lifted[j].infinity = 0;
}

/* Keeps the first n transactions of a run whose slot is still open (the others answered), with
   their positions in the call (at). */
static size_t run_compact(tx_scan *st, unsigned char **slot, size_t *at, size_t n) {
    size_t p, q = 0;
    for (p = 0; p < n; p++) {
        if (slot[p] == NULL) continue;
        st[q] = st[p];
        at[q] = at[p];
        slot[q++] = slot[p];
    }
    return q;
}

/* Transaction p of a run answered with a negative SCAN_* code; its arrays freed. */
static void run_fail(tx_scan *st, unsigned char **slot, size_t p, int result) {
    put_u32(slot[p], (uint32_t)result);
    slot[p] = NULL;
    free(st[p].block);
    st[p].block = NULL;
}

/*
 * Scans count transactions (the keys, outpoints and x-only keys of each one after the other,
 * nkeys[i] keys and nxs[i] outputs for transaction i). Transaction i's answer goes to out at
 * 4 i + MATCH_BYTES (nxs[0] + ... + nxs[i - 1]): its scan_tx result (a big-endian int32), then
 * that many matches. The same answers as scan_tx one by one, in runs of RUN_MAX transactions
 * that share their work: the square roots and exponentiations eight at a time in the lanes where
 * the CPU has them (ecmult-lanes.h), the inversions of A and of the ECDH points of those with
 * several keys one for the run, the multiplications eight at a time in the lanes. With ecdh_out,
 * each transaction's ECDH point compressed goes to ecdh_out + 33 i (left as it was for one whose
 * scan failed before it): with b_scan = 1 and k_max = 0, its tweak input_hash * A. Returns 0,
 * or SCAN_NO_MEMORY.
 */
static int scan_many(const scanner *sc, size_t count, const unsigned char *keys, const uint32_t *nkeys, const unsigned char *outpoints,
                     const unsigned char *xs, const uint32_t *nxs, uint32_t k_max, const unsigned char *fixed, unsigned char *out,
                     unsigned char *ecdh_out) {
    tx_scan st[RUN_MAX];
    secp256k1_ge a[RUN_MAX];
    secp256k1_scalar s[RUN_MAX];
    secp256k1_gej r[RUN_MAX];
    unsigned char *slot[RUN_MAX]; /* where each pending transaction's answer goes; NULL once written */
    secp256k1_fe pow[RUN_MAX], ecdh_zinv[RUN_MAX], zs[RUN_MAX], zinv[RUN_MAX];
    const secp256k1_fe *with_pow[RUN_MAX];  /* one_key_end's power (pow), raised in the run */
    const secp256k1_fe *with_zinv[RUN_MAX]; /* keys_end's 1 / Z (ecdh_zinv), from the run's inversion */
    secp256k1_gej *with_t0[RUN_MAX]; /* t_0 G, computed for the run (in the lanes) */
    size_t which[RUN_MAX], folded[RUN_MAX], at[RUN_MAX], i = 0, p, pending, n, f, c, j, k, fold;
    int result;
    pow_queue queue;
    secp256k1_gej t0[RUN_MAX];
    const unsigned char *hashes[RUN_MAX];
    queue.count = 0;
    while (i < count) {
        /* the first halves of up to RUN_MAX transactions that get as far as their multiplication */
        for (pending = 0; pending < RUN_MAX && i < count; i++) {
            result = scan_begin(sc, &st[pending], keys, nkeys[i], outpoints + 36 * i, xs, nxs[i], fixed, 1);
            if (result == SCAN_NO_MEMORY) break;
            if (result < 0) {
                put_u32(out, (uint32_t)result);
            } else {
                at[pending] = i;
                slot[pending++] = out;
            }
            keys += 33 * (size_t)nkeys[i];
            xs += 32 * (size_t)nxs[i];
            out += 4 + MATCH_BYTES * (size_t)nxs[i];
        }
        if (i < count && pending < RUN_MAX) {
            for (p = 0; p < pending; p++) free(st[p].block);
            return SCAN_NO_MEMORY;
        }
        /* the square roots of the keys of those with several, and of the outputs to look up of
           those with so many outputs that they try x(T + B_spend) first (many labels; the others'
           outputs are lifted with their lookups at k = 0, below) */
        for (p = 0; p < pending; p++) {
            for (k = 0; k < st[p].nkeys; k++) if (!st[p].kbad[k]) pow_push(&queue, &st[p].ky[k]);
            if (!st[p].lift_outputs || st[p].remaining < SPEND_FIRST_FROM) continue;
            for (j = 0; j < st[p].m; j++) {
                if (st[p].state[j] & 3) continue;
                curve_rhs(&st[p].lifted[j].y, &st[p].x[j]);
                pow_push(&queue, &st[p].lifted[j].y);
            }
        }
        pow_flush(&queue);
        for (p = 0; p < pending; p++) {
            if (!st[p].lift_outputs || st[p].remaining < SPEND_FIRST_FROM) continue;
            for (j = 0; j < st[p].m; j++) if (!(st[p].state[j] & 3)) lift_output_from(&st[p], j);
        }
        /* A of those with several keys: their sums, one inversion for them all, their hashes */
        for (n = 0, p = 0; p < pending; p++) {
            if (st[p].nkeys == 0) continue;
            result = keys_sum(&st[p]);
            if (result < 0) run_fail(st, slot, p, result);
            else if (st[p].a_pending) {
                zs[n] = st[p].acc.z;
                which[n++] = p;
            }
        }
        fe_inv_many(zinv, zs, n);
        for (c = 0; c < n; c++) secp256k1_ge_set_gej_zinv(&st[which[c]].a, &st[which[c]].acc, &zinv[c]);
        for (p = 0; p < pending; p++) {
            if (slot[p] == NULL || st[p].nkeys == 0) continue;
            result = keys_hash(sc, &st[p], &st[p].a, st[p].outpoint, fixed);
            if (result < 0) run_fail(st, slot, p, result);
        }
        pending = run_compact(st, slot, at, pending);
        /* the multiplications */
        for (p = 0; p < pending; p++) {
            a[p] = st[p].a;
            s[p] = st[p].s;
            with_pow[p] = NULL;
            with_zinv[p] = NULL;
            with_t0[p] = NULL;
        }
#if ECMULT_LANES
        if (lanes && pending >= LANES_FROM) {
            ecmult_lanes(r, a, s, (int)pending);
        } else
#endif
        {
            for (p = 0; p < pending; p++) {
                secp256k1_gej acc;
                secp256k1_gej_set_ge(&acc, &a[p]);
                secp256k1_ecmult(&ctx->ecmult_ctx, &r[p], &acc, &s[p], NULL);
            }
        }
        /* each one-key transaction's exponentiation (its ECDH point's inverse and its key's square
           root); the others' ECDH points, one inversion for them all */
        for (n = 0, p = 0; p < pending; p++) {
            if (secp256k1_gej_is_infinity(&r[p])) continue;
            if (st[p].one_key) {
                one_key_pow_base(&st[p], &r[p], &pow[p]);
                pow_push(&queue, &pow[p]);
                with_pow[p] = &pow[p];
            } else {
                zs[n] = r[p].z;
                which[n++] = p;
            }
        }
        pow_flush(&queue);
        fe_inv_many(ecdh_zinv, zs, n);
        for (c = 0; c < n; c++) with_zinv[which[c]] = &ecdh_zinv[c];
        /* the ECDH points affine, compressed, t_0 hashed */
        for (p = 0; p < pending; p++) {
            secp256k1_scalar_clear(&s[p]);
            secp256k1_scalar_clear(&st[p].s);
            result = scan_shared(&st[p], &r[p], fixed, with_pow[p], with_zinv[p]);
            if (result < 0) {
                put_u32(slot[p], (uint32_t)result);
                slot[p] = NULL;
            } else if (ecdh_out != NULL) {
                memcpy(ecdh_out + 33 * at[p], st[p].ecdh33, 33);
            }
        }
        /* t_0 G of those that look at their outputs (eight at a time in the lanes) */
        for (n = 0, p = 0; p < pending; p++) {
            if (slot[p] == NULL || !scan_needs_t0(&st[p], k_max)) continue;
            which[n] = p;
            hashes[n++] = st[p].hash0;
        }
#if ECMULT_LANES
        if (lanes && n >= LANES_FROM) comb_lanes(t0, hashes, (int)n);
        else
#endif
        for (c = 0; c < n; c++) comb_mul(&t0[c], hashes[c]);
        for (c = 0; c < n; c++) with_t0[which[c]] = &t0[c];
        /* with many labels, the lookups at k = 0 (those that try x(T + B_spend) first do their own):
           the outputs' square roots in the lanes but one a transaction, whose square root comes
           with 1 / the product of the transaction's E in one exponentiation (fe_inv_and_sqrt's),
           raised in the same lanes: no inversion of their own. One inversion for the run, for
           those whose every output was lifted already. */
        for (n = 0, f = 0, p = 0; p < pending; p++) {
            tx_scan *tx = &st[p];
            if (with_t0[p] == NULL || search_by_keys(sc, tx, tx->remaining) || tx->remaining >= SPEND_FIRST_FROM) continue;
            for (fold = SIZE_MAX, j = 0; j < tx->m; j++) {
                if (tx->state[j] & 3) continue;
                if (fold == SIZE_MAX) {
                    fold = j; /* lookup_prepare's fold: the first output not lifted */
                    continue;
                }
                curve_rhs(&tx->lifted[j].y, &tx->x[j]);
                pow_push(&queue, &tx->lifted[j].y);
                tx->state[j] |= 2 | 16; /* lookup_prepare reads only x */
            }
            lookup_prepare(tx, with_t0[p], &tx->k0);
            tx->k0_ready = 1;
            if (tx->k0.fold != SIZE_MAX) {
                curve_rhs(&tx->k0_u, &tx->x[tx->k0.fold]);
                inv_sqrt_base(&tx->k0_inv, &tx->pre[tx->k0.count - 1], &tx->k0_u); /* the fold's E is among them: count >= 1 */
                pow_push(&queue, &tx->k0_inv);
                folded[f++] = p;
                continue;
            }
            secp256k1_fe_set_int(&tx->k0_inv, 1); /* no output to look up: nothing to invert */
            if (tx->k0.count == 0) continue;
            zs[n] = tx->pre[tx->k0.count - 1];
            which[n++] = p;
        }
        pow_flush(&queue);
        for (p = 0; p < pending; p++) {
            if (!st[p].k0_ready) continue;
            for (j = 0; j < st[p].m; j++) {
                if (!(st[p].state[j] & 16)) continue;
                st[p].state[j] &= ~16;
                lift_output_from(&st[p], j);
            }
        }
        for (c = 0; c < f; c++) {
            tx_scan *tx = &st[folded[c]];
            secp256k1_fe pow_k0 = tx->k0_inv;
            fold = tx->k0.fold;
            /* lookup_invert's fold, from the power raised here */
            if (!inv_sqrt_finish(&tx->k0_inv, &tx->lifted[fold].y, &tx->pre[tx->k0.count - 1], &tx->k0_u, &pow_k0)) tx->state[fold] |= 4;
            tx->lifted[fold].infinity = 0;
            tx->state[fold] |= 2;
        }
        fe_inv_many(zinv, zs, n);
        for (c = 0; c < n; c++) st[which[c]].k0_inv = zinv[c];
        for (p = 0; p < pending; p++) {
            if (slot[p] != NULL) put_u32(slot[p], (uint32_t)scan_outputs(sc, &st[p], k_max, fixed, slot[p] + 4, with_t0[p]));
        }
    }
    return 0;
}

#include "packed-inputs.h"

/* ------------------------------------------------------------------------------------------ */
/* N-API glue. */

/* The hash every tagged hash is replaced by with `ecOnly` (the benchmark's tight loop: the EC work alone). */
static const unsigned char EC_ONLY_HASH[32] = {
    0x2b, 0x6e, 0x1c, 0x4d, 0x77, 0x10, 0x93, 0xa2, 0x5c, 0x0f, 0x31, 0x8e, 0x64, 0xd9, 0x02, 0x47,
    0xb8, 0x55, 0x1a, 0xe3, 0x9f, 0x70, 0x26, 0xc4, 0x81, 0x3d, 0x6a, 0xf5, 0x08, 0x92, 0x4e, 0x1b};

#define NAPI_CHECK(call) do { if ((call) != napi_ok) return NULL; } while (0)

static napi_value throw_type(napi_env env, const char *message) {
    napi_throw_type_error(env, NULL, message);
    return NULL;
}

/* The bytes of a Uint8Array (a Buffer is one) argument, or NULL with a TypeError thrown. */
static unsigned char *bytes_of(napi_env env, napi_value value, size_t *length, const char *message) {
    bool is_typed;
    napi_typedarray_type type;
    void *data;
    napi_value buffer;
    size_t offset;
    if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed) {
        throw_type(env, message);
        return NULL;
    }
    if (napi_get_typedarray_info(env, value, &type, length, &data, &buffer, &offset) != napi_ok || type != napi_uint8_array) {
        throw_type(env, message);
        return NULL;
    }
    return data != NULL ? data : (unsigned char *)"";
}

static scanner *scanner_of(napi_env env, napi_value value) {
    void *data = NULL;
    if (napi_get_value_external(env, value, &data) != napi_ok || data == NULL) {
        throw_type(env, "expected a scanner handle");
        return NULL;
    }
    return data;
}

/* createScanner(scanKey: Uint8Array(32), spendKey: Uint8Array(65 uncompressed)) -> handle */
static napi_value js_create_scanner(napi_env env, napi_callback_info info) {
    size_t argc = 2, len;
    napi_value argv[2], handle;
    unsigned char *scan_key, *spend;
    scanner *sc;
    secp256k1_ge point;
    NAPI_CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 2) return throw_type(env, "createScanner(scanKey, spendKey)");
    if (!init_tables()) {
        napi_throw_error(env, NULL, "out of memory building the scanner tables");
        return NULL;
    }
    scan_key = bytes_of(env, argv[0], &len, "scanKey: expected 32 bytes");
    if (scan_key == NULL) return NULL;
    if (len != 32) return throw_type(env, "scanKey: expected 32 bytes");
    spend = bytes_of(env, argv[1], &len, "spendKey: expected a 65-byte uncompressed point");
    if (spend == NULL) return NULL;
    if (len != 65 || !secp256k1_eckey_pubkey_parse(&point, spend, 65)) return throw_type(env, "spendKey: expected a 65-byte uncompressed point");
    sc = calloc(1, sizeof(scanner));
    if (sc == NULL) {
        napi_throw_error(env, NULL, "out of memory");
        return NULL;
    }
    sc->infinite_label = -2;
    if (!scalar_from(&sc->scan, scan_key) || !scanner_add(sc, &point, -1)) {
        scanner_free(env, sc, NULL);
        return throw_type(env, "scanKey: not a valid scalar");
    }
    if (napi_create_external(env, sc, scanner_free, NULL, &handle) != napi_ok) {
        scanner_free(env, sc, NULL);
        return NULL;
    }
    return handle;
}

/* addSpendKey(handle, point: Uint8Array(65) | null, label: int32 >= 0): B_m for one label. */
static napi_value js_add_spend_key(napi_env env, napi_callback_info info) {
    size_t argc = 3, len;
    napi_value argv[3];
    napi_valuetype kind;
    scanner *sc;
    int32_t label;
    NAPI_CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 3) return throw_type(env, "addSpendKey(handle, point, label)");
    if ((sc = scanner_of(env, argv[0])) == NULL) return NULL;
    if (napi_get_value_int32(env, argv[2], &label) != napi_ok || label < 0) return throw_type(env, "label: expected an integer >= 0");
    NAPI_CHECK(napi_typeof(env, argv[1], &kind));
    if (kind == napi_null) {
        sc->infinite_label = label;
        return NULL;
    } else {
        secp256k1_ge point;
        unsigned char *bytes = bytes_of(env, argv[1], &len, "point: expected a 65-byte uncompressed point or null");
        if (bytes == NULL) return NULL;
        if (len != 65 || !secp256k1_eckey_pubkey_parse(&point, bytes, 65)) return throw_type(env, "point: expected a 65-byte uncompressed point or null");
        if (!scanner_add(sc, &point, label)) napi_throw_error(env, NULL, "out of memory");
    }
    return NULL;
}

/*
 * scan(handle, keys: Uint8Array(33n), outpoint: Uint8Array(36), xs: Uint8Array(32m), kMax,
 *      ecOnly: boolean) -> number of matches (then read with matches()), or a negative code.
 */
static napi_value js_scan(napi_env env, napi_callback_info info) {
    size_t argc = 6, nkeys, nout, nxs;
    napi_value argv[6], out;
    scanner *sc;
    unsigned char *keys, *outpoint, *xs;
    uint32_t k_max;
    bool ec_only = false;
    int result;
    NAPI_CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 5) return throw_type(env, "scan(handle, keys, outpoint, xs, kMax[, ecOnly])");
    if ((sc = scanner_of(env, argv[0])) == NULL) return NULL;
    if ((keys = bytes_of(env, argv[1], &nkeys, "keys: expected 33-byte keys")) == NULL) return NULL;
    if (nkeys % 33 != 0) return throw_type(env, "keys: expected 33-byte keys");
    if ((outpoint = bytes_of(env, argv[2], &nout, "outpoint: expected 36 bytes")) == NULL) return NULL;
    if (nout != 36) return throw_type(env, "outpoint: expected 36 bytes");
    if ((xs = bytes_of(env, argv[3], &nxs, "xs: expected 32-byte x-only keys")) == NULL) return NULL;
    if (nxs % 32 != 0) return throw_type(env, "xs: expected 32-byte x-only keys");
    if (napi_get_value_uint32(env, argv[4], &k_max) != napi_ok) return throw_type(env, "kMax: expected an integer");
    if (argc > 5) napi_get_value_bool(env, argv[5], &ec_only);
    if (sc->out_cap < nxs / 32 + 1) {
        free(sc->out);
        sc->out_cap = 0;
        sc->out = malloc(MATCH_BYTES * (nxs / 32 + 1));
        if (sc->out == NULL) {
            napi_throw_error(env, NULL, "out of memory");
            return NULL;
        }
        sc->out_cap = nxs / 32 + 1;
    }
    result = scan_tx(sc, keys, nkeys / 33, outpoint, xs, nxs / 32, k_max, ec_only ? EC_ONLY_HASH : NULL);
    if (result == SCAN_NO_MEMORY) {
        napi_throw_error(env, NULL, "out of memory");
        return NULL;
    }
    if (result > 0) {
        /* the matches as one Buffer: read them in JS with DataView */
        void *data;
        NAPI_CHECK(napi_create_buffer_copy(env, (size_t)result * MATCH_BYTES, sc->out, &data, &out));
        return out;
    }
    NAPI_CHECK(napi_create_int32(env, result, &out));
    return out;
}

/* The Uint32Array argument's values, or NULL with a TypeError thrown. */
static uint32_t *u32s_of(napi_env env, napi_value value, size_t *length, const char *message) {
    bool is_typed;
    napi_typedarray_type type;
    void *data;
    napi_value buffer;
    size_t offset;
    if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed ||
        napi_get_typedarray_info(env, value, &type, length, &data, &buffer, &offset) != napi_ok || type != napi_uint32_array) {
        throw_type(env, message);
        return NULL;
    }
    return data != NULL ? data : (uint32_t *)"\0\0\0";
}

/*
 * scanMany(handle, keys, keyCounts: Uint32Array, outpoints, xs, xsCounts: Uint32Array, kMax[, ecOnly[, tweaked]])
 * -> Buffer: for transaction i, at 4 i + 44 (xsCounts[0] + ... + xsCounts[i - 1]), scan's answer
 * for it as a big-endian int32 (matches, 0, or a negative code), then that many 44-byte matches.
 * tweaked: each transaction's one key is its tweak input_hash * A, as a tweak index serves it
 * (its outpoint is not read): the ECDH point is b_scan times it.
 */
static napi_value js_scan_many(napi_env env, napi_callback_info info) {
    size_t argc = 9, nkeys_bytes, ncounts, nout, nxs_bytes, nxcounts, i, want_keys = 0, want_xs = 0, size;
    napi_value argv[9], result;
    scanner *sc;
    unsigned char *keys, *outpoints, *xs, *out;
    uint32_t *nkeys, *nxs, k_max;
    bool ec_only = false, tweaked = false;
    int status;
    void *data;
    NAPI_CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 7) return throw_type(env, "scanMany(handle, keys, keyCounts, outpoints, xs, xsCounts, kMax[, ecOnly])");
    if ((sc = scanner_of(env, argv[0])) == NULL) return NULL;
    if ((keys = bytes_of(env, argv[1], &nkeys_bytes, "keys: expected 33-byte keys")) == NULL) return NULL;
    if ((nkeys = u32s_of(env, argv[2], &ncounts, "keyCounts: expected a Uint32Array")) == NULL) return NULL;
    if ((outpoints = bytes_of(env, argv[3], &nout, "outpoints: expected 36 bytes a transaction")) == NULL) return NULL;
    if ((xs = bytes_of(env, argv[4], &nxs_bytes, "xs: expected 32-byte x-only keys")) == NULL) return NULL;
    if ((nxs = u32s_of(env, argv[5], &nxcounts, "xsCounts: expected a Uint32Array")) == NULL) return NULL;
    if (napi_get_value_uint32(env, argv[6], &k_max) != napi_ok) return throw_type(env, "kMax: expected an integer");
    if (argc > 7) napi_get_value_bool(env, argv[7], &ec_only);
    if (argc > 8) napi_get_value_bool(env, argv[8], &tweaked);
    if (nxcounts != ncounts || nout != 36 * ncounts) return throw_type(env, "scanMany: one count of each and one outpoint a transaction");
    for (i = 0; i < ncounts; i++) {
        want_keys += 33 * (size_t)nkeys[i];
        want_xs += 32 * (size_t)nxs[i];
    }
    if (want_keys != nkeys_bytes) return throw_type(env, "keys: expected 33 bytes for each key counted");
    if (want_xs != nxs_bytes) return throw_type(env, "xs: expected 32 bytes for each output counted");
    if (tweaked && want_keys != 33 * ncounts) return throw_type(env, "keys: expected one tweak a transaction");
    size = 4 * ncounts + MATCH_BYTES * (want_xs / 32);
    NAPI_CHECK(napi_create_buffer(env, size > 0 ? size : 1, &data, &result));
    out = data;
    sc->tweaked = tweaked; /* for this call only: a handle lives on one thread, and the call returns before any other */
    status = scan_many(sc, ncounts, keys, nkeys, outpoints, xs, nxs, k_max, ec_only ? EC_ONLY_HASH : NULL, out, NULL);
    sc->tweaked = 0;
    if (status == SCAN_NO_MEMORY) {
        napi_throw_error(env, NULL, "out of memory");
        return NULL;
    }
    return result;
}

/*
 * scanPacked(handle, jobs: Uint8Array, kMax[, ecOnly]) -> Buffer: the packed transactions of
 * `jobs` (packBlockAnswer's format) read here (packed-inputs.h) and scanned as scanMany scans
 * them; for each one whose answer is neither 0 nor "not eligible", in order: its offset in
 * `jobs` (u32), the answer (i32: matches, or a negative code), then that many 44-byte matches;
 * all big-endian. A TypeError when `jobs` is not whole packed transactions.
 */
static napi_value js_scan_packed(napi_env env, napi_callback_info info) {
    size_t argc = 4, njobs, i, size = 0, at = 0, pos = 0;
    napi_value argv[4], result = NULL;
    scanner *sc;
    unsigned char *jobs, *out = NULL;
    int pass;
    uint32_t k_max;
    bool ec_only = false;
    packed_jobs j;
    int read;
    void *data;
    const char *failure = NULL;
    NAPI_CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 3) return throw_type(env, "scanPacked(handle, jobs, kMax[, ecOnly])");
    if ((sc = scanner_of(env, argv[0])) == NULL) return NULL;
    if ((jobs = bytes_of(env, argv[1], &njobs, "jobs: expected packed transactions")) == NULL) return NULL;
    if (napi_get_value_uint32(env, argv[2], &k_max) != napi_ok) return throw_type(env, "kMax: expected an integer");
    if (argc > 3) napi_get_value_bool(env, argv[3], &ec_only);
    memset(&j, 0, sizeof j);
    read = packed_read(&j, jobs, jobs + njobs, 0);
    if (read == PACKED_MALFORMED) failure = "jobs: not whole packed transactions";
    else if (read == PACKED_NO_MEMORY) failure = "out of memory";
    else {
        /* scanMany's answers: 4 bytes a transaction, then room for a match per output */
        size = 4 * j.count + MATCH_BYTES * (j.xs.n / 32);
        out = malloc(size > 0 ? size : 1);
        if (out == NULL ||
            scan_many(sc, j.count, j.keys.b, (const uint32_t *)(void *)j.nkeys.b, j.outpoints.b, j.xs.b,
                      (const uint32_t *)(void *)j.nxs.b, k_max, ec_only ? EC_ONLY_HASH : NULL, out, NULL) == SCAN_NO_MEMORY)
            failure = "out of memory";
    }
    if (failure != NULL) {
        free(out);
        packed_jobs_free(&j);
        if (read == PACKED_MALFORMED) return throw_type(env, failure);
        napi_throw_error(env, NULL, failure);
        return NULL;
    }
    /* the answers that say something, each after its transaction's offset: sized, then copied */
    for (pass = 0; pass < 2; pass++) {
        unsigned char *to = NULL;
        if (pass == 1) {
            if (napi_create_buffer(env, pos, &data, &result) != napi_ok) break;
            to = data;
        }
        for (at = 0, pos = 0, i = 0; i < j.count; i++) {
            const unsigned char *answer_at = out + at;
            int32_t answer = (int32_t)((uint32_t)answer_at[0] << 24 | (uint32_t)answer_at[1] << 16 | (uint32_t)answer_at[2] << 8 | answer_at[3]);
            size_t matches = answer > 0 ? MATCH_BYTES * (size_t)answer : 0;
            at += 4 + MATCH_BYTES * (size_t)((const uint32_t *)(void *)j.nxs.b)[i];
            if (answer == 0 || answer == SCAN_NOT_ELIGIBLE) continue;
            if (to != NULL) {
                put_u32(to + pos, ((const uint32_t *)(void *)j.offsets.b)[i]);
                memcpy(to + pos + 4, answer_at, 4 + matches);
            }
            pos += 8 + matches;
        }
    }
    packed_jobs_free(&j);
    free(out);
    return result;
}

/* lanes() -> how many multiplications scanMany does at once (8 with AVX-512 IFMA, else 0: one by one). */
static napi_value js_lanes(napi_env env, napi_callback_info info) {
    napi_value out;
    (void)info;
    if (!init_tables()) {
        napi_throw_error(env, NULL, "out of memory");
        return NULL;
    }
    NAPI_CHECK(napi_create_uint32(env, (uint32_t)lanes, &out));
    return out;
}

/* lanesSelfTest(n) -> [differing, recomputed]: ecmult_lanes against secp256k1_ecmult on n pairs,
   fe_pow_p3d4_lanes against fe_pow_p3d4 on the n points' x and y, and comb_lanes against comb_mul on
   the same n scalars (edge scalars first, then pseudo-random points and scalars from a fixed
   xorshift), or null without the lanes. For the tests. */
static napi_value js_lanes_self_test(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1], out;
    uint32_t n, bad = 0, recomputed = 0;
    NAPI_CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1 || napi_get_value_uint32(env, argv[0], &n) != napi_ok) return throw_type(env, "lanesSelfTest(n)");
    if (!init_tables()) {
        napi_throw_error(env, NULL, "out of memory");
        return NULL;
    }
#if ECMULT_LANES
    if (lanes) {
        /* n - 1, n - 2, lambda, -lambda, 1, 2, 3, 2^128 - 1, 2^128, 2^255, and -a - b lambda for a, b
           in {1, 2} (where the last sums of the two halves can meet: the lanes' Z = 0), big-endian */
        static const unsigned char edges[][32] = {
            {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
             0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x40},
            {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
             0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x3f},
            {0x53, 0x63, 0xad, 0x4c, 0xc0, 0x5c, 0x30, 0xe0, 0xa5, 0x26, 0x1c, 0x02, 0x88, 0x12, 0x64, 0x5a,
             0x12, 0x2e, 0x22, 0xea, 0x20, 0x81, 0x66, 0x78, 0xdf, 0x02, 0x96, 0x7c, 0x1b, 0x23, 0xbd, 0x72},
            {0xac, 0x9c, 0x52, 0xb3, 0x3f, 0xa3, 0xcf, 0x1f, 0x5a, 0xd9, 0xe3, 0xfd, 0x77, 0xed, 0x9b, 0xa4,
             0xa8, 0x80, 0xb9, 0xfc, 0x8e, 0xc7, 0x39, 0xc2, 0xe0, 0xcf, 0xc8, 0x10, 0xb5, 0x12, 0x83, 0xcf},
            {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
             0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01},
            {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
             0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02},
            {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
             0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03},
            {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
             0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
            {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
             0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
            {0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
             0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
            {0xac, 0x9c, 0x52, 0xb3, 0x3f, 0xa3, 0xcf, 0x1f, 0x5a, 0xd9, 0xe3, 0xfd, 0x77, 0xed, 0x9b, 0xa4,
             0xa8, 0x80, 0xb9, 0xfc, 0x8e, 0xc7, 0x39, 0xc2, 0xe0, 0xcf, 0xc8, 0x10, 0xb5, 0x12, 0x83, 0xce},
            {0xac, 0x9c, 0x52, 0xb3, 0x3f, 0xa3, 0xcf, 0x1f, 0x5a, 0xd9, 0xe3, 0xfd, 0x77, 0xed, 0x9b, 0xa4,
             0xa8, 0x80, 0xb9, 0xfc, 0x8e, 0xc7, 0x39, 0xc2, 0xe0, 0xcf, 0xc8, 0x10, 0xb5, 0x12, 0x83, 0xcd},
            {0x59, 0x38, 0xa5, 0x66, 0x7f, 0x47, 0x9e, 0x3e, 0xb5, 0xb3, 0xc7, 0xfa, 0xef, 0xdb, 0x37, 0x4a,
             0x96, 0x52, 0x97, 0x12, 0x6e, 0x45, 0xd3, 0x4a, 0x01, 0xcd, 0x31, 0x94, 0x99, 0xee, 0xc6, 0x5c},
            {0x59, 0x38, 0xa5, 0x66, 0x7f, 0x47, 0x9e, 0x3e, 0xb5, 0xb3, 0xc7, 0xfa, 0xef, 0xdb, 0x37, 0x4a,
             0x96, 0x52, 0x97, 0x12, 0x6e, 0x45, 0xd3, 0x4a, 0x01, 0xcd, 0x31, 0x94, 0x99, 0xee, 0xc6, 0x5b}};
        const size_t n_edges = sizeof(edges) / sizeof(edges[0]);
        uint64_t state = 0x9e3779b97f4a7c15ULL;
        secp256k1_ge a[ECMULT_LANES];
        secp256k1_scalar q[ECMULT_LANES];
        secp256k1_gej got[ECMULT_LANES], want;
        unsigned char bytes[ECMULT_LANES][32];
        const unsigned char *byte_rows[ECMULT_LANES];
        uint32_t done = 0;
        int l;
        while (done < n) {
            int count = n - done < ECMULT_LANES ? (int)(n - done) : ECMULT_LANES;
            for (l = 0; l < count; l++) {
                unsigned char b[32];
                secp256k1_scalar k;
                secp256k1_gej pj;
                int i, overflow;
                size_t at = done + l;
                do { /* a random point k G */
                    for (i = 0; i < 32; i++) {
                        state ^= state << 13; state ^= state >> 7; state ^= state << 17;
                        b[i] = (unsigned char)state;
                    }
                    secp256k1_scalar_set_b32(&k, b, &overflow);
                } while (overflow || secp256k1_scalar_is_zero(&k));
                comb_mul(&pj, b);
                secp256k1_ge_set_gej_var(&a[l], &pj);
                if (at < n_edges) {
                    memcpy(b, edges[at], 32);
                } else {
                    for (i = 0; i < 32; i++) {
                        state ^= state << 13; state ^= state >> 7; state ^= state << 17;
                        b[i] = (unsigned char)state;
                    }
                }
                secp256k1_scalar_set_b32(&q[l], b, &overflow);
                memcpy(bytes[l], b, 32);
                byte_rows[l] = bytes[l];
            }
            recomputed += (uint32_t)ecmult_lanes(got, a, q, count);
            for (l = 0; l < count; l++) {
                secp256k1_gej aj, d;
                secp256k1_gej_set_ge(&aj, &a[l]);
                secp256k1_ecmult(&ctx->ecmult_ctx, &want, &aj, &q[l], NULL);
                secp256k1_gej_neg(&d, &want);
                secp256k1_gej_add_var(&d, &d, &got[l], NULL);
                if (!secp256k1_gej_is_infinity(&d)) bad++;
            }
            /* the points' x, then their y, through the exponentiation (two vectors from 5 points) */
            {
                secp256k1_fe xs[2 * ECMULT_LANES], pw[2 * ECMULT_LANES], one;
                for (l = 0; l < count; l++) {
                    xs[l] = a[l].x;
                    xs[count + l] = a[l].y;
                }
                fe_pow_p3d4_lanes(pw, xs, 2 * count);
                for (l = 0; l < 2 * count; l++) {
                    fe_pow_p3d4(&one, &xs[l]);
                    secp256k1_fe_negate(&one, &one, 1);
                    secp256k1_fe_add(&one, &pw[l]);
                    if (!secp256k1_fe_normalizes_to_zero_var(&one)) bad++;
                }
            }
            /* the same scalars' bytes through the comb: b G */
            recomputed += (uint32_t)comb_lanes(got, byte_rows, count);
            for (l = 0; l < count; l++) {
                secp256k1_gej d;
                comb_mul(&want, bytes[l]);
                secp256k1_gej_neg(&d, &want);
                secp256k1_gej_add_var(&d, &d, &got[l], NULL);
                if (!secp256k1_gej_is_infinity(&d)) bad++;
            }
            done += (uint32_t)count;
        }
        napi_value v;
        NAPI_CHECK(napi_create_array_with_length(env, 2, &out));
        NAPI_CHECK(napi_create_uint32(env, bad, &v));
        NAPI_CHECK(napi_set_element(env, out, 0, v));
        NAPI_CHECK(napi_create_uint32(env, recomputed, &v));
        NAPI_CHECK(napi_set_element(env, out, 1, v));
        return out;
    }
#endif
    (void)bad;
    (void)recomputed;
    NAPI_CHECK(napi_get_null(env, &out));
    return out;
}

/* inverseSelfTest(n): fe_inv_fast against the library's exponentiation on n values (edge
   values first, then pseudo-random ones from a fixed xorshift: a quarter each with a run of 64
   zero bits inside, a multiple of 2^128, below 2^128, and as drawn);
   returns the number that differ or whose product with the input is not 1. For the tests. */
static napi_value js_inverse_self_test(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1], out;
    uint32_t n, i, bad = 0;
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    NAPI_CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1 || napi_get_value_uint32(env, argv[0], &n) != napi_ok) return throw_type(env, "\"n\" expected a count");
    for (i = 0; i < n; i++) {
        unsigned char b[32];
        secp256k1_fe a, want, got, one;
        int j;
        for (j = 0; j < 32; j++) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            b[j] = (unsigned char)state;
        }
        if (i < 8) {
            /* 0, 1, 2, p - 1, p - 2, 2^255, 2^64, 3 */
            static const unsigned char P_MINUS_1[32] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                                        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                                        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE, 0xFF, 0xFF, 0xFC, 0x2E};
            memset(b, 0, 32);
            if (i == 1) b[31] = 1;
            if (i == 2) b[31] = 2;
            if (i == 3) memcpy(b, P_MINUS_1, 32);
            if (i == 4) {
                memcpy(b, P_MINUS_1, 32);
                b[31] = 0x2D;
            }
            if (i == 5) b[0] = 0x80;
            if (i == 6) b[23] = 1;
            if (i == 7) b[31] = 3;
        } else if (i % 4 == 1) {
            memset(b + 4 + (i % 24), 0, 8); /* a run of zero bits inside */
        } else if (i % 4 == 2) {
            memset(b + 16, 0, 16); /* a multiple of 2^128 */
        } else if (i % 4 == 3) {
            memset(b, 0, 16); /* below 2^128 */
        }
        if (!secp256k1_fe_set_b32(&a, b)) continue; /* >= p: not a field element */
        secp256k1_fe_inv_var(&want, &a);
        fe_inv_fast(&got, &a);
        secp256k1_fe_normalize_var(&want);
        secp256k1_fe_normalize_var(&got);
        secp256k1_fe_mul(&one, &got, &a);
        secp256k1_fe_normalize_var(&one);
        if (!secp256k1_fe_equal_var(&want, &got)) {
            bad++;
        } else if (!secp256k1_fe_is_zero(&a)) {
            secp256k1_fe_set_int(&want, 1);
            if (!secp256k1_fe_equal_var(&one, &want)) bad++;
        }
    }
    NAPI_CHECK(napi_create_uint32(env, bad, &out));
    return out;
}

/* The scanner of tweaks(): b_scan = 1 (the ECDH point is then the tweak), B_spend = G (never
   looked at: no output is searched). Built once per process on first use (any thread), only
   read afterwards (scan_many takes a const scanner). */
static scanner *tweak_sc;
static void build_tweak_scanner(void) {
    static const unsigned char one[32] = {[31] = 1};
    scanner *sc = calloc(1, sizeof(scanner));
    if (sc == NULL) return;
    sc->infinite_label = -2;
    if (!scalar_from(&sc->scan, one) || !scanner_add(sc, &secp256k1_ge_const_g, -1)) {
        scanner_free(NULL, sc, NULL);
        return;
    }
    tweak_sc = sc;
}
static scanner *tweak_scanner(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_tweak_scanner);
    return tweak_sc;
}

/*
 * tweaks(keys, keyCounts: Uint32Array, outpoints) -> Buffer: for each transaction (its eligible
 * input keys and smallest outpoint, as scanMany takes them) its tweak input_hash * A, 33 bytes
 * compressed, at 33 i; 33 zero bytes for one that has none (no valid key, A at infinity, or
 * input_hash not a valid scalar). scanMany's runs: the inversions shared, the multiplications
 * eight at a time in the lanes where the CPU has them.
 */
/* The tweaks input_hash·A of `count` transactions (keys and outpoints as scan_many takes them) at
   out + 33 i: the process's tweak scanner (b_scan = 1) with no outputs and k_max = 0, whose ECDH
   point is the tweak; left as it was for one that has none. Returns 0 or SCAN_NO_MEMORY. */
static int tweaks_into(size_t count, const unsigned char *keys, const uint32_t *nkeys, const unsigned char *outpoints, unsigned char *out) {
    scanner *sc;
    uint32_t *nxs;
    unsigned char *answers;
    int status = SCAN_NO_MEMORY;
    if (!init_tables() || (sc = tweak_scanner()) == NULL) return SCAN_NO_MEMORY;
    nxs = calloc(count + 1, sizeof(uint32_t)); /* no outputs */
    answers = malloc(4 * count + 1);           /* scan_many's answers, not read */
    if (nxs != NULL && answers != NULL) status = scan_many(sc, count, keys, nkeys, outpoints, (const unsigned char *)"", nxs, 0, NULL, answers, out);
    free(nxs);
    free(answers);
    return status;
}

static napi_value js_tweaks(napi_env env, napi_callback_info info) {
    size_t argc = 3, nkeys_bytes, ncounts, nout, i, want_keys = 0;
    napi_value argv[3], result;
    unsigned char *keys, *outpoints;
    uint32_t *nkeys;
    void *data;
    NAPI_CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 3) return throw_type(env, "tweaks(keys, keyCounts, outpoints)");
    if ((keys = bytes_of(env, argv[0], &nkeys_bytes, "keys: expected 33-byte keys")) == NULL) return NULL;
    if ((nkeys = u32s_of(env, argv[1], &ncounts, "keyCounts: expected a Uint32Array")) == NULL) return NULL;
    if ((outpoints = bytes_of(env, argv[2], &nout, "outpoints: expected 36 bytes a transaction")) == NULL) return NULL;
    if (nout != 36 * ncounts) return throw_type(env, "tweaks: one count and one outpoint a transaction");
    for (i = 0; i < ncounts; i++) want_keys += 33 * (size_t)nkeys[i];
    if (want_keys != nkeys_bytes) return throw_type(env, "keys: expected 33 bytes for each key counted");
    NAPI_CHECK(napi_create_buffer(env, ncounts > 0 ? 33 * ncounts : 1, &data, &result));
    memset(data, 0, ncounts > 0 ? 33 * ncounts : 1);
    if (tweaks_into(ncounts, keys, nkeys, outpoints, data) == SCAN_NO_MEMORY) {
        napi_throw_error(env, NULL, "out of memory");
        return NULL;
    }
    return result;
}

/*
 * tweaksPacked(jobs) -> for each packed transaction (src/packed.ts) that has an eligible input
 * key and a taproot output, in order: its offset in `jobs` (u32 LE), then its tweak input_hash·A
 * (33 bytes; zeros when the keys sum to infinity or the input hash is not a scalar). The inputs
 * are read in C as scanPacked reads them, the multiplications done as tweaks does them.
 */
static napi_value js_tweaks_packed(napi_env env, napi_callback_info info) {
    size_t argc = 1, njobs, i;
    napi_value argv[1], result = NULL;
    unsigned char *jobs, *tweaks = NULL, *out;
    packed_jobs j;
    int read, status = SCAN_NO_MEMORY;
    void *data;
    NAPI_CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1) return throw_type(env, "tweaksPacked(jobs)");
    if ((jobs = bytes_of(env, argv[0], &njobs, "jobs: expected packed transactions")) == NULL) return NULL;
    memset(&j, 0, sizeof j);
    read = packed_read(&j, jobs, jobs + njobs, 0);
    if (read == PACKED_MALFORMED) {
        packed_jobs_free(&j);
        return throw_type(env, "jobs: not whole packed transactions");
    }
    if (read == 1 && (tweaks = calloc(j.count + 1, 33)) != NULL)
        status = tweaks_into(j.count, j.keys.b, (const uint32_t *)(void *)j.nkeys.b, j.outpoints.b, tweaks);
    if (status != SCAN_NO_MEMORY && napi_create_buffer(env, 37 * j.count, &data, &result) == napi_ok) {
        for (out = data, i = 0; i < j.count; i++, out += 37) {
            uint32_t offset = ((const uint32_t *)(void *)j.offsets.b)[i];
            out[0] = (unsigned char)offset;
            out[1] = (unsigned char)(offset >> 8);
            out[2] = (unsigned char)(offset >> 16);
            out[3] = (unsigned char)(offset >> 24);
            memcpy(out + 4, tweaks + 33 * i, 33);
        }
    }
    free(tweaks);
    packed_jobs_free(&j);
    if (status == SCAN_NO_MEMORY) {
        napi_throw_error(env, NULL, "out of memory");
        return NULL;
    }
    return result;
}

/* rpc-block.c */
napi_value bip352_pack_block_answer(napi_env env, napi_callback_info info);
void bip352_rpc_block_init(void);

static napi_value init(napi_env env, napi_value exports) {
    napi_property_descriptor props[] = {
        {"packBlockAnswer", NULL, bip352_pack_block_answer, NULL, NULL, NULL, napi_default, NULL},
        {"createScanner", NULL, js_create_scanner, NULL, NULL, NULL, napi_default, NULL},
        {"addSpendKey", NULL, js_add_spend_key, NULL, NULL, NULL, napi_default, NULL},
        {"scan", NULL, js_scan, NULL, NULL, NULL, napi_default, NULL},
        {"scanMany", NULL, js_scan_many, NULL, NULL, NULL, napi_default, NULL},
        {"scanPacked", NULL, js_scan_packed, NULL, NULL, NULL, napi_default, NULL},
        {"tweaks", NULL, js_tweaks, NULL, NULL, NULL, napi_default, NULL},
        {"tweaksPacked", NULL, js_tweaks_packed, NULL, NULL, NULL, napi_default, NULL},
        {"lanes", NULL, js_lanes, NULL, NULL, NULL, napi_default, NULL},
        {"lanesSelfTest", NULL, js_lanes_self_test, NULL, NULL, NULL, napi_default, NULL},
        {"inverseSelfTest", NULL, js_inverse_self_test, NULL, NULL, NULL, napi_default, NULL},
    };
    bip352_rpc_block_init();
    NAPI_CHECK(napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props));
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
