/*
 * Eight variable-base multiplications at once, one in each 64-bit lane of AVX-512 registers,
 * with the 52-bit multiply-accumulate instructions (AVX-512 IFMA: Intel since Ice Lake, AMD
 * since Zen 4). Included by scan.c after the libsecp256k1 source; scan_many uses it for the ECDH
 * multiplications of a run of transactions when the CPU has those instructions
 * (ecmult_lanes_available), and libsecp256k1's secp256k1_ecmult otherwise.
 *
 * Why: the ECDH multiplication is about 60 % of a transaction's scan (README.md beside this file, "Scanning one transaction"). Field
 * elements are 5 limbs of 52 bits, libsecp256k1's own radix (field_5x52), so a lane converts to
 * and from a secp256k1_fe limb for limb. A vector field multiplication (8 products) costs about
 * what 2 scalar ones do.
 *
 * The algorithm is libsecp256k1's secp256k1_ecmult_const, run in lockstep in every lane: q split
 * by the GLV endomorphism into two ~128-bit halves, each written with secp256k1_wnaf_const in 33
 * odd signed 4-bit digits (none zero, so every lane adds at every window: no lane waits for
 * another), a table of the odd multiples 1A..15A per lane at one global Z (so the table points
 * act as affine ones: mixed additions; built in the lanes too, lanes_table), then 32 times 4
 * doublings and two additions. What differs:
 * - not constant time: the ECDH scalar of a scan is input_hash * b_scan, and the scan already
 *   uses libsecp256k1's variable-time secp256k1_ecmult for it (the package README, "Scanning, in short": side channels); the
 *   digits pick table entries by a gather;
 * - the addition is the plain mixed one (madd-2007-bl), which cannot add a point to itself or
 *   to its negation: both give Z = 0, and Z stays 0 through every later step. A lane whose
 *   final Z is 0 is recomputed by secp256k1_ecmult (never seen with random inputs; the self-test
 *   counts them), so every lane's answer is the scalar one's.
 *
 * Bounds: every vector field element is kept with limbs 0-3 below 2^52 and limb 4 below
 * 2^48 + 2^6 (vfe_carry), which is what the multiply-accumulate instructions need (they read the
 * low 52 bits of each operand) and leaves room for the sums below.
 */

/* x86-64 with GCC or Clang (the target attribute, the CPU check) and the library's 5x52 field */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && defined(USE_FIELD_5X52)
#define ECMULT_LANES 8

#include <immintrin.h>

#define LANES_TARGET __attribute__((target("avx512f,avx512dq,avx512ifma"), always_inline)) static inline
#define LANES_ENTRY __attribute__((target("avx512f,avx512dq,avx512ifma"))) static

typedef struct { __m512i v[5]; } vfe;
typedef struct { vfe x, y, z; } vgej;

#define LIMB52 0xFFFFFFFFFFFFFULL
#define LIMB48 0xFFFFFFFFFFFFULL
#define FOLD256 0x1000003D1ULL  /* 2^256 mod p */
#define FOLD260 0x1000003D10ULL /* 2^260 mod p: the weight of limb 5 of a product */

/* 2p in 52-bit limbs: each limb above any carried limb, so a + 2p - b never goes negative. */
static const uint64_t TWO_P[5] = {0x1FFFFDFFFFF85EULL, 0x1FFFFFFFFFFFFEULL, 0x1FFFFFFFFFFFFEULL, 0x1FFFFFFFFFFFFEULL, 0x1FFFFFFFFFFFEULL};

/* Limbs below 2^62 back to limbs 0-3 below 2^52 and limb 4 below 2^48 + 2^6 (the same value mod p). */
LANES_TARGET void vfe_carry(vfe *a) {
    const __m512i m52 = _mm512_set1_epi64(LIMB52);
    __m512i top = _mm512_srli_epi64(a->v[4], 48);
    a->v[4] = _mm512_and_si512(a->v[4], _mm512_set1_epi64(LIMB48));
    a->v[0] = _mm512_madd52lo_epu64(a->v[0], top, _mm512_set1_epi64(FOLD256)); /* top < 2^14: the product fits 52 bits */
    a->v[1] = _mm512_add_epi64(a->v[1], _mm512_srli_epi64(a->v[0], 52));
    a->v[0] = _mm512_and_si512(a->v[0], m52);
    a->v[2] = _mm512_add_epi64(a->v[2], _mm512_srli_epi64(a->v[1], 52));
    a->v[1] = _mm512_and_si512(a->v[1], m52);
    a->v[3] = _mm512_add_epi64(a->v[3], _mm512_srli_epi64(a->v[2], 52));
    a->v[2] = _mm512_and_si512(a->v[2], m52);
    a->v[4] = _mm512_add_epi64(a->v[4], _mm512_srli_epi64(a->v[3], 52));
    a->v[3] = _mm512_and_si512(a->v[3], m52);
}

/* The 10 columns of a product (each below 10 * 2^52) reduced mod p into r (carried). */
LANES_TARGET void vfe_reduce(vfe *r, __m512i c[10]) {
    const __m512i m52 = _mm512_set1_epi64(LIMB52), fold = _mm512_set1_epi64(FOLD260);
    __m512i top;
    int i;
    /* columns 5-9 (weights 2^260 and up) carried to 52 bits: the multiplier operand must be */
    _Pragma("GCC unroll 4") for (i = 5; i < 9; i++) {
        c[i + 1] = _mm512_add_epi64(c[i + 1], _mm512_srli_epi64(c[i], 52));
        c[i] = _mm512_and_si512(c[i], m52);
    }
    /* c[i] 2^(52 i) = c[i] 2^260 2^(52 (i - 5)) = c[i] FOLD260 2^(52 (i - 5)) mod p */
    _Pragma("GCC unroll 4") for (i = 5; i < 9; i++) {
        c[i - 5] = _mm512_madd52lo_epu64(c[i - 5], c[i], fold);
        c[i - 4] = _mm512_madd52hi_epu64(c[i - 4], c[i], fold);
    }
    c[4] = _mm512_madd52lo_epu64(c[4], c[9], fold);
    top = _mm512_madd52hi_epu64(_mm512_setzero_si512(), c[9], fold); /* below 2^37, at 2^260 */
    c[0] = _mm512_madd52lo_epu64(c[0], top, fold);
    c[1] = _mm512_madd52hi_epu64(c[1], top, fold);
    _Pragma("GCC unroll 5") for (i = 0; i < 5; i++) r->v[i] = c[i];
    vfe_carry(r);
}

LANES_TARGET void vfe_mul(vfe *r, const vfe *a, const vfe *b) {
    __m512i c[10];
    int i, j;
    _Pragma("GCC unroll 10") for (i = 0; i < 10; i++) c[i] = _mm512_setzero_si512();
    _Pragma("GCC unroll 5") for (i = 0; i < 5; i++) {
        _Pragma("GCC unroll 5") for (j = 0; j < 5; j++) {
            c[i + j] = _mm512_madd52lo_epu64(c[i + j], a->v[i], b->v[j]);
            c[i + j + 1] = _mm512_madd52hi_epu64(c[i + j + 1], a->v[i], b->v[j]);
        }
    }
    vfe_reduce(r, c);
}

/* The cross products once, doubled, then the squares: 30 multiply-accumulates instead of 50. */
LANES_TARGET void vfe_sqr(vfe *r, const vfe *a) {
    __m512i c[10], d[10];
    int i, j;
    _Pragma("GCC unroll 10") for (i = 0; i < 10; i++) c[i] = d[i] = _mm512_setzero_si512();
    _Pragma("GCC unroll 5") for (i = 0; i < 5; i++) {
        _Pragma("GCC unroll 5") for (j = i + 1; j < 5; j++) {
            c[i + j] = _mm512_madd52lo_epu64(c[i + j], a->v[i], a->v[j]);
            c[i + j + 1] = _mm512_madd52hi_epu64(c[i + j + 1], a->v[i], a->v[j]);
        }
        d[2 * i] = _mm512_madd52lo_epu64(d[2 * i], a->v[i], a->v[i]);
        d[2 * i + 1] = _mm512_madd52hi_epu64(d[2 * i + 1], a->v[i], a->v[i]);
    }
    _Pragma("GCC unroll 10") for (i = 0; i < 10; i++) c[i] = _mm512_add_epi64(_mm512_slli_epi64(c[i], 1), d[i]);
    vfe_reduce(r, c);
}

LANES_TARGET void vfe_add(vfe *r, const vfe *a, const vfe *b) {
    int i;
    _Pragma("GCC unroll 5") for (i = 0; i < 5; i++) r->v[i] = _mm512_add_epi64(a->v[i], b->v[i]);
    vfe_carry(r);
}

/* r = a - b + 2p */
LANES_TARGET void vfe_sub(vfe *r, const vfe *a, const vfe *b) {
    int i;
    _Pragma("GCC unroll 5") for (i = 0; i < 5; i++) {
        r->v[i] = _mm512_sub_epi64(_mm512_add_epi64(a->v[i], _mm512_set1_epi64((long long)TWO_P[i])), b->v[i]);
    }
    vfe_carry(r);
}

/* r = a * 2^s, s <= 3 */
LANES_TARGET void vfe_shl(vfe *r, const vfe *a, int s) {
    int i;
    _Pragma("GCC unroll 5") for (i = 0; i < 5; i++) r->v[i] = _mm512_slli_epi64(a->v[i], s);
    vfe_carry(r);
}

/* r = 2p (Jacobian, a = 0: dbl-2009-l, 2M + 5S) */
LANES_TARGET void vgej_double(vgej *r, const vgej *p) {
    vfe a, b, c, d, e, f, t;
    vfe_sqr(&a, &p->x);
    vfe_sqr(&b, &p->y);
    vfe_sqr(&c, &b);
    vfe_add(&t, &p->x, &b);
    vfe_sqr(&t, &t);
    vfe_sub(&t, &t, &a);
    vfe_sub(&t, &t, &c);
    vfe_shl(&d, &t, 1); /* D = 2 ((X + B)^2 - A - C) */
    vfe_add(&e, &a, &a);
    vfe_add(&e, &e, &a); /* E = 3A */
    vfe_sqr(&f, &e);
    vfe_mul(&r->z, &p->y, &p->z);
    vfe_shl(&r->z, &r->z, 1);
    vfe_shl(&t, &d, 1);
    vfe_sub(&r->x, &f, &t);
    vfe_sub(&t, &d, &r->x);
    vfe_mul(&t, &e, &t);
    vfe_shl(&c, &c, 3);
    vfe_sub(&r->y, &t, &c);
}

/* r = p + (x2, y2) with (x2, y2) affine (madd-2007-bl, 7M + 4S). Equal x gives Z = 0. With zr,
   also Z3 / Z1 = 2H there (Z3 = (Z1 + H)^2 - Z1Z1 - HH = 2 Z1 H). */
LANES_TARGET void vgej_add_ge(vgej *r, const vgej *p, const vfe *x2, const vfe *y2, vfe *zr) {
    vfe z1z1, u2, s2, h, hh, i4, j, rr, v, t, x3;
    vfe_sqr(&z1z1, &p->z);
    vfe_mul(&u2, x2, &z1z1);
    vfe_mul(&t, &p->z, &z1z1);
    vfe_mul(&s2, y2, &t);
    vfe_sub(&h, &u2, &p->x);
    if (zr != NULL) vfe_shl(zr, &h, 1);
    vfe_sqr(&hh, &h);
    vfe_shl(&i4, &hh, 2);
    vfe_mul(&j, &h, &i4);
    vfe_sub(&rr, &s2, &p->y);
    vfe_shl(&rr, &rr, 1);
    vfe_mul(&v, &p->x, &i4);
    vfe_sqr(&t, &rr);
    vfe_sub(&t, &t, &j);
    vfe_shl(&x3, &v, 1);
    vfe_sub(&x3, &t, &x3); /* X3 = r^2 - J - 2V */
    vfe_add(&t, &p->z, &h);
    vfe_sqr(&t, &t);
    vfe_sub(&t, &t, &z1z1);
    vfe_sub(&r->z, &t, &hh); /* Z3 = (Z1 + H)^2 - Z1Z1 - HH */
    vfe_sub(&t, &v, &x3);
    vfe_mul(&t, &rr, &t);
    vfe_mul(&j, &p->y, &j);
    vfe_shl(&j, &j, 1);
    vfe_sub(&r->y, &t, &j); /* Y3 = r (V - X3) - 2 Y1 J */
    r->x = x3;
}

#define LANES_TABLE ECMULT_TABLE_SIZE(WINDOW_A)          /* 8 odd multiples */
#define LANES_DIGITS WNAF_SIZE_BITS(128, WINDOW_A - 1)   /* 32 windows above the first digit */

/* The per-lane inputs of a run: the tables (each lane's odd multiples of A, and their images under
   the endomorphism) as 52-bit limbs x0..x4 y0..y4 with the lanes innermost, each lane's digits,
   skews and global Z. */
typedef struct {
    uint64_t table[2][LANES_TABLE][10][ECMULT_LANES];
    long long digits[2][LANES_DIGITS + 1][ECMULT_LANES];
    int skew[2][ECMULT_LANES];
    secp256k1_fe globalz[ECMULT_LANES];
} lanes_input;

static void fe_to_limbs(uint64_t *out, const secp256k1_fe *a) {
    secp256k1_fe t = *a;
    secp256k1_fe_normalize_var(&t);
    memcpy(out, t.n, 5 * sizeof(uint64_t));
}

/* a, normalized, into lane l of v (limbs, lanes innermost). */
static void fe_to_lane(uint64_t v[5][ECMULT_LANES], int l, const secp256k1_fe *a) {
    uint64_t limbs[5];
    int i;
    fe_to_limbs(limbs, a);
    for (i = 0; i < 5; i++) v[i][l] = limbs[i];
}

/* Lane l of a vector result v (limbs, lanes innermost) as a field element, in the library's own
   5x52 limbs (limb 4 up to 2^48 + 2^6 is magnitude 2, which its multiplication and
   secp256k1_fe_normalizes_to_zero_var accept). */
static void fe_from_lane(secp256k1_fe *r, const uint64_t v[5][ECMULT_LANES], int l) {
    int i;
    for (i = 0; i < 5; i++) r->n[i] = v[i][l];
#ifdef VERIFY
    r->magnitude = 2;
    r->normalized = 0;
#endif
}

/* The entries picked by each lane's digit (odd, signed: entry |d| / 2, y negated when d < 0). */
LANES_TARGET void lanes_pick(vfe *x, vfe *y, const lanes_input *in, int half, int window) {
    const long long *base = (const long long *)&in->table[half][0][0][0];
    __m512i d = _mm512_loadu_si512(in->digits[half][window]);
    __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    __m512i at = _mm512_add_epi64(lane, _mm512_mullo_epi64(_mm512_srli_epi64(_mm512_abs_epi64(d), 1), _mm512_set1_epi64(10 * ECMULT_LANES)));
    __mmask8 negative = _mm512_cmplt_epi64_mask(d, _mm512_setzero_si512());
    vfe negy;
    int i;
    _Pragma("GCC unroll 5") for (i = 0; i < 5; i++) {
        x->v[i] = _mm512_i64gather_epi64(_mm512_add_epi64(at, _mm512_set1_epi64(i * ECMULT_LANES)), base, 8);
        y->v[i] = _mm512_i64gather_epi64(_mm512_add_epi64(at, _mm512_set1_epi64((5 + i) * ECMULT_LANES)), base, 8);
        negy.v[i] = _mm512_sub_epi64(_mm512_set1_epi64((long long)TWO_P[i]), y->v[i]);
    }
    vfe_carry(&negy);
    _Pragma("GCC unroll 5") for (i = 0; i < 5; i++) y->v[i] = _mm512_mask_blend_epi64(negative, y->v[i], negy.v[i]);
}

LANES_TARGET void vfe_load(vfe *r, const uint64_t in[5][ECMULT_LANES]) {
    int j;
    for (j = 0; j < 5; j++) r->v[j] = _mm512_loadu_si512(in[j]);
}

LANES_TARGET void vfe_store(uint64_t out[5][ECMULT_LANES], const vfe *a) {
    int j;
    for (j = 0; j < 5; j++) _mm512_storeu_si512(out[j], a->v[j]);
}

LANES_TARGET void vgej_store(uint64_t out[3][5][ECMULT_LANES], const vgej *a) {
    vfe_store(out[0], &a->x);
    vfe_store(out[1], &a->y);
    vfe_store(out[2], &a->z);
}

/*
 * The tables of a run, all lanes at once: libsecp256k1's
 * secp256k1_ecmult_odd_multiples_table_globalz_windowa in the lanes. With D = 2A = (X, Y, Z_D),
 * on the isomorphic curve where D is affine ((x, y) -> (x Z_D^2, y Z_D^3)) A is
 * A' = (x Z_D^2, y Z_D^3, 1); seven mixed additions of D give 3A' ... 15A', each Z the previous
 * one times 2H (zr). Scaling every entry to the last one's Z (by the product of the later zr)
 * leaves all of them at that Z, Z_7, which is Z_7 Z_D on the curve itself: the lane's global Z
 * (globalz, limbs). No addition meets its own point or its negation: (2i - 1) A = +-2A would need
 * A of order at most 2i + 1, and every point but infinity has order n. The second table is the
 * first with x times beta (A's image under the endomorphism lambda). a: the lanes' A, affine
 * (ax, ay: limbs, lanes innermost).
 */
LANES_ENTRY void lanes_table(lanes_input *in, uint64_t globalz[5][ECMULT_LANES], const uint64_t ax[5][ECMULT_LANES],
                             const uint64_t ay[5][ECMULT_LANES], const uint64_t beta[5]) {
    vgej a, d, e[LANES_TABLE];
    vfe zr[LANES_TABLE], zd2, zd3, f, f2, f3, x, y, b;
    int i, j;
    vfe_load(&a.x, ax);
    vfe_load(&a.y, ay);
    for (j = 0; j < 5; j++) {
        a.z.v[j] = _mm512_set1_epi64(j == 0);
        b.v[j] = _mm512_set1_epi64((long long)beta[j]);
    }
    vgej_double(&d, &a);
    vfe_sqr(&zd2, &d.z);
    vfe_mul(&zd3, &zd2, &d.z);
    vfe_mul(&e[0].x, &a.x, &zd2);
    vfe_mul(&e[0].y, &a.y, &zd3);
    e[0].z = a.z;
    for (i = 1; i < LANES_TABLE; i++) vgej_add_ge(&e[i], &e[i - 1], &d.x, &d.y, &zr[i]);
    for (i = LANES_TABLE - 1; i >= 0; i--) {
        if (i == LANES_TABLE - 1) {
            x = e[i].x;
            y = e[i].y;
            f = zr[i];
        } else {
            vfe_sqr(&f2, &f);
            vfe_mul(&f3, &f2, &f);
            vfe_mul(&x, &e[i].x, &f2);
            vfe_mul(&y, &e[i].y, &f3);
            if (i > 0) vfe_mul(&f, &f, &zr[i]);
        }
        vfe_store(in->table[0][i], &x);
        vfe_store(in->table[0][i] + 5, &y);
        vfe_mul(&x, &x, &b);
        vfe_store(in->table[1][i], &x);
        vfe_store(in->table[1][i] + 5, &y);
    }
    vfe_mul(&f, &e[LANES_TABLE - 1].z, &d.z);
    vfe_store(globalz, &f);
}

/* The lockstep loop of secp256k1_ecmult_const over the prepared lanes; the result in out[coordinate][limb][lane]. */
LANES_ENTRY void lanes_run(uint64_t out[3][5][ECMULT_LANES], const lanes_input *in) {
    vgej acc;
    vfe x, y;
    int i, j;
    lanes_pick(&acc.x, &acc.y, in, 0, LANES_DIGITS);
    _Pragma("GCC unroll 5") for (j = 0; j < 5; j++) acc.z.v[j] = _mm512_set1_epi64(j == 0);
    lanes_pick(&x, &y, in, 1, LANES_DIGITS);
    vgej_add_ge(&acc, &acc, &x, &y, NULL);
    for (i = LANES_DIGITS - 1; i >= 0; i--) {
        for (j = 0; j < WINDOW_A - 1; j++) vgej_double(&acc, &acc);
        lanes_pick(&x, &y, in, 0, i);
        vgej_add_ge(&acc, &acc, &x, &y, NULL);
        lanes_pick(&x, &y, in, 1, i);
        vgej_add_ge(&acc, &acc, &x, &y, NULL);
    }
    vgej_store(out, &acc);
}

/* Lane l of a vector result (out[coordinate][limb][lane]) as a point (fe_from_lane); 0 when its Z
   is 0 (a mixed addition met its own point or its negation on the way: the caller recomputes that
   lane). */
static int gej_from_lane(secp256k1_gej *g, uint64_t out[3][5][ECMULT_LANES], int l) {
    fe_from_lane(&g->x, out[0], l);
    fe_from_lane(&g->y, out[1], l);
    fe_from_lane(&g->z, out[2], l);
    g->infinity = 0;
    return !secp256k1_fe_normalizes_to_zero_var(&g->z);
}

/*
 * r[i] = q[i] * a[i] for i < count (count <= ECMULT_LANES; unused lanes repeat lane 0), each
 * equal to secp256k1_ecmult's answer. a[i] not infinity. Returns the number of lanes recomputed
 * by secp256k1_ecmult (Z = 0 met on the way).
 */
static int ecmult_lanes(secp256k1_gej *r, const secp256k1_ge *a, const secp256k1_scalar *q, int count) {
    static const secp256k1_fe beta = SECP256K1_FE_CONST(0x7ae96a2bul, 0x657c0710ul, 0x6e64479eul, 0xac3434e9ul, 0x9cf04975ul,
                                                        0x12f58995ul, 0xc1396c28ul, 0x719501eeul); /* secp256k1_ge_mul_lambda's */
    lanes_input in_; /* ~14 KB */
    uint64_t out[3][5][ECMULT_LANES], ax[5][ECMULT_LANES], ay[5][ECMULT_LANES], globalz[5][ECMULT_LANES], beta_limbs[5];
    int l, i, k, recomputed = 0;
    for (l = 0; l < ECMULT_LANES; l++) {
        int src = l < count ? l : 0;
        secp256k1_scalar q1, qlam;
        int digits[2][LANES_DIGITS + 1];
        secp256k1_scalar_split_lambda(&q1, &qlam, &q[src]);
        in_.skew[0][l] = secp256k1_wnaf_const(digits[0], &q1, WINDOW_A - 1, 128);
        in_.skew[1][l] = secp256k1_wnaf_const(digits[1], &qlam, WINDOW_A - 1, 128);
        for (i = 0; i <= LANES_DIGITS; i++) {
            in_.digits[0][i][l] = digits[0][i];
            in_.digits[1][i][l] = digits[1][i];
        }
        fe_to_lane(ax, l, &a[src].x);
        fe_to_lane(ay, l, &a[src].y);
    }
    fe_to_limbs(beta_limbs, &beta);
    lanes_table(&in_, globalz, ax, ay, beta_limbs);
    for (l = 0; l < ECMULT_LANES; l++) fe_from_lane(&in_.globalz[l], globalz, l);
    lanes_run(out, &in_);
    for (l = 0; l < count; l++) {
        secp256k1_gej *g = &r[l];
        if (!gej_from_lane(g, out, l)) {
            secp256k1_gej aj;
            secp256k1_gej_set_ge(&aj, &a[l]);
            secp256k1_ecmult(&ctx->ecmult_ctx, g, &aj, &q[l], NULL);
            recomputed++;
            continue;
        }
        secp256k1_fe_mul(&g->z, &g->z, &in_.globalz[l]);
        /* the wNAF skews: minus A (or 2A) for the first half, minus lambda A (or 2 lambda A) for
           the second, as one or two mixed additions (2A made affine would cost an inversion) */
        for (k = 0; k < 2; k++) {
            secp256k1_ge c;
            int times;
            secp256k1_ge_neg(&c, &a[l]);
            if (k == 1) secp256k1_ge_mul_lambda(&c, &c);
            for (times = 0; times < in_.skew[k][l]; times++) secp256k1_gej_add_ge_var(g, g, &c, NULL);
        }
    }
    return recomputed;
}

/* ------------------------------------------------------------------------------------------ */
/* a^((p-3)/4) for eight field elements at once, or sixteen: the chain of pow-p3d4.h, in the lanes. */

/* Elements one exponentiation takes at most: two vectors of lanes. */
#define POW_LANES (2 * ECMULT_LANES)

LANES_TARGET void vfe_sqr_n(vfe *r, const vfe *a, int n) {
    int i;
    *r = *a;
    for (i = 0; i < n; i++) vfe_sqr(r, r);
}

/*
 * Two vectors raised together. The chain is 255 squarings each of which waits for the one before
 * (the reduction's carries): one chain leaves the multiply-accumulate units idle much of the
 * time, and a second, independent one in the same loop fills them (three or four chains gain
 * nothing more over two; docs/performance/bip352.md).
 */
typedef struct { vfe v[2]; } vfe2;

LANES_TARGET void vfe2_sqr_n(vfe2 *r, const vfe2 *a, int n) {
    int i;
    *r = *a;
    for (i = 0; i < n; i++) {
        vfe_sqr(&r->v[0], &r->v[0]);
        vfe_sqr(&r->v[1], &r->v[1]);
    }
}

LANES_TARGET void vfe2_mul(vfe2 *r, const vfe2 *a, const vfe2 *b) {
    vfe_mul(&r->v[0], &a->v[0], &b->v[0]);
    vfe_mul(&r->v[1], &a->v[1], &b->v[1]);
}

LANES_ENTRY void pow_run(uint64_t out[5][ECMULT_LANES], const uint64_t in[5][ECMULT_LANES]) {
    vfe a, r;
    vfe_load(&a, in);
    POW_P3D4_CHAIN(vfe, vfe_sqr_n, vfe_mul, &r, &a);
    vfe_store(out, &r);
}

LANES_ENTRY void pow_run2(uint64_t out[2][5][ECMULT_LANES], const uint64_t in[2][5][ECMULT_LANES]) {
    vfe2 a, r;
    vfe_load(&a.v[0], in[0]);
    vfe_load(&a.v[1], in[1]);
    POW_P3D4_CHAIN(vfe2, vfe2_sqr_n, vfe2_mul, &r, &a);
    vfe_store(out[0], &r.v[0]);
    vfe_store(out[1], &r.v[1]);
}

/* r[i] = a[i]^((p-3)/4) for i < count (count <= POW_LANES), as fe_pow_p3d4 gives; r may be a.
   Up to eight in one vector, more in two. */
static void fe_pow_p3d4_lanes(secp256k1_fe *r, const secp256k1_fe *a, int count) {
    uint64_t in[2][5][ECMULT_LANES], out[2][5][ECMULT_LANES];
    int l, vectors = count > ECMULT_LANES ? 2 : 1;
    for (l = 0; l < vectors * ECMULT_LANES; l++) fe_to_lane(in[l / ECMULT_LANES], l % ECMULT_LANES, &a[l < count ? l : 0]);
    if (vectors == 2) pow_run2(out, in);
    else pow_run(out[0], in[0]);
    for (l = 0; l < count; l++) fe_from_lane(&r[l], out[l / ECMULT_LANES], l % ECMULT_LANES);
}

/* ------------------------------------------------------------------------------------------ */
/* t G for eight scalars at once: comb_mul's comb (32 windows of 8 bits, at most 32 mixed
   additions, no doubling) in lockstep, over a copy of its table in 52-bit limbs. */

static uint64_t (*comb_limbs)[256][10]; /* comb_limbs[i][j] = comb[i][j] as x0..x4 y0..y4; [i][0] = [i][1] (never used) */

/* Builds comb_limbs from scan.c's comb (once, with it); 0 when out of memory. */
static int lanes_comb_table(void) {
    int i, j;
    comb_limbs = malloc(sizeof(*comb_limbs) * 32);
    if (comb_limbs == NULL) return 0;
    for (i = 0; i < 32; i++) {
        for (j = 1; j < 256; j++) {
            secp256k1_ge p;
            secp256k1_ge_from_storage(&p, &comb[i][j]);
            fe_to_limbs(&comb_limbs[i][j][0], &p.x);
            fe_to_limbs(&comb_limbs[i][j][5], &p.y);
        }
        memcpy(comb_limbs[i][0], comb_limbs[i][1], sizeof(comb_limbs[i][0]));
    }
    return 1;
}

/* The comb over the lanes: per lane, its 32 bytes (big-endian scalar); the result in out[coordinate][limb][lane]
   and, per lane, whether it is still the point at infinity (no non-zero byte). */
LANES_ENTRY void comb_run(uint64_t out[3][5][ECMULT_LANES], __mmask8 *infinite, const long long bytes[32][ECMULT_LANES]) {
    const long long *base = (const long long *)&comb_limbs[0][0][0];
    vgej acc, sum;
    vfe x, y;
    __mmask8 inf = 0xFF;
    int i, j;
    _Pragma("GCC unroll 5") for (j = 0; j < 5; j++) acc.x.v[j] = acc.y.v[j] = acc.z.v[j] = _mm512_setzero_si512();
    for (i = 0; i < 32; i++) {
        __m512i b = _mm512_loadu_si512(bytes[i]);
        __m512i at = _mm512_mullo_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)i * 256), b), _mm512_set1_epi64(10));
        __mmask8 nonzero = _mm512_cmpneq_epi64_mask(b, _mm512_setzero_si512());
        __mmask8 take = nonzero & inf, add = nonzero & (__mmask8)~inf;
        _Pragma("GCC unroll 5") for (j = 0; j < 5; j++) {
            x.v[j] = _mm512_i64gather_epi64(_mm512_add_epi64(at, _mm512_set1_epi64(j)), base, 8);
            y.v[j] = _mm512_i64gather_epi64(_mm512_add_epi64(at, _mm512_set1_epi64(5 + j)), base, 8);
        }
        vgej_add_ge(&sum, &acc, &x, &y, NULL);
        _Pragma("GCC unroll 5") for (j = 0; j < 5; j++) {
            acc.x.v[j] = _mm512_mask_blend_epi64(take, _mm512_mask_blend_epi64(add, acc.x.v[j], sum.x.v[j]), x.v[j]);
            acc.y.v[j] = _mm512_mask_blend_epi64(take, _mm512_mask_blend_epi64(add, acc.y.v[j], sum.y.v[j]), y.v[j]);
            acc.z.v[j] = _mm512_mask_blend_epi64(take, _mm512_mask_blend_epi64(add, acc.z.v[j], sum.z.v[j]), _mm512_set1_epi64(j == 0));
        }
        inf &= (__mmask8)~nonzero;
    }
    vgej_store(out, &acc);
    *infinite = inf;
}

/*
 * r[i] = s[i] G for i < count (count <= ECMULT_LANES), each what comb_mul gives (the same point),
 * s[i] 32 bytes big-endian. A lane whose mixed addition met its own point or its negation (Z = 0)
 * is recomputed by comb_mul. Returns the number recomputed.
 */
static int comb_lanes(secp256k1_gej *r, const unsigned char *const *s, int count) {
    long long bytes[32][ECMULT_LANES];
    uint64_t out[3][5][ECMULT_LANES];
    __mmask8 infinite;
    int l, i, recomputed = 0;
    for (l = 0; l < ECMULT_LANES; l++) {
        const unsigned char *s32 = s[l < count ? l : 0];
        for (i = 0; i < 32; i++) bytes[i][l] = s32[31 - i];
    }
    comb_run(out, &infinite, bytes);
    for (l = 0; l < count; l++) {
        secp256k1_gej *g = &r[l];
        if (infinite & (1u << l)) {
            secp256k1_gej_set_infinity(g);
            continue;
        }
        if (!gej_from_lane(g, out, l)) {
            comb_mul(g, s[l]);
            recomputed++;
        }
    }
    return recomputed;
}

/* Whether this CPU (and the OS, for the AVX-512 state) runs the lanes; BIP352_SCAN_LANES=0 turns them off. */
static int ecmult_lanes_available(void) {
    const char *off = getenv("BIP352_SCAN_LANES");
    if (off != NULL && strcmp(off, "0") == 0) return 0;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512ifma");
}

#else
#define ECMULT_LANES 0
#endif
