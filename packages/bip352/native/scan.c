/*
 * BIP-352 scanning of one transaction in one call, on libsecp256k1's own field and group
 * arithmetic (the library source that the `secp256k1` npm package ships, compiled here as one
 * translation unit so that its internal functions are reachable).
 *
 * Why internals and not the public API: every public call that returns a point pays a field
 * inversion to make it affine, and every call that takes a compressed key a square root. The
 * scan needs exactly two inversions per transaction (A and the ECDH point, because both are
 * hashed in compressed form) and one square root per input key; everything after the ECDH stays
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

/* ------------------------------------------------------------------------------------------ */
/* Process-wide tables, built once. */

static secp256k1_context *ctx;                 /* its ecmult tables serve the ECDH */
static secp256k1_ge_storage (*comb)[256];      /* comb[i][j] = j * 256^i * G (j >= 1) */
static secp256k1_sha256 tag_inputs, tag_shared; /* SHA256(tag) || SHA256(tag) absorbed */

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
/* A receiver's spend keys: B_spend (label -1) and B_m = B_spend + L_m (label = the caller's slot). */

typedef struct {
    secp256k1_ge point; /* affine, normalized */
    int32_t label;
} spend_key;

typedef struct {
    secp256k1_scalar scan;
    spend_key *keys; /* keys[0] = B_spend */
    size_t count, cap;
    int32_t *table; /* open addressing on the top 64 bits of x: index into keys, -1 empty */
    size_t table_size;
    int32_t infinite_label; /* the label whose B_m is the point at infinity (L_m = -B_spend), or -2 */
    unsigned char *out; /* scratch for results */
    size_t out_cap;
} scanner;

static uint64_t x_key(const secp256k1_fe *x_normalized) {
    unsigned char b[32];
    uint64_t k = 0;
    int i;
    secp256k1_fe_get_b32(b, x_normalized);
    for (i = 0; i < 8; i++) k = (k << 8) | b[i];
    return k;
}

static void table_insert(scanner *sc, size_t index) {
    size_t mask = sc->table_size - 1, slot = (size_t)x_key(&sc->keys[index].point.x) & mask;
    while (sc->table[slot] >= 0) slot = (slot + 1) & mask;
    sc->table[slot] = (int32_t)index;
}

static int table_rebuild(scanner *sc, size_t size) {
    int32_t *t = malloc(sizeof(int32_t) * size);
    size_t i;
    if (t == NULL) return 0;
    for (i = 0; i < size; i++) t[i] = -1;
    free(sc->table);
    sc->table = t;
    sc->table_size = size;
    for (i = 0; i < sc->count; i++) table_insert(sc, i);
    return 1;
}

/* The spend key whose x equals p's (p affine, normalized), or NULL. */
static const spend_key *table_find(const scanner *sc, const secp256k1_ge *p) {
    size_t mask = sc->table_size - 1, slot = (size_t)x_key(&p->x) & mask;
    int32_t i;
    while ((i = sc->table[slot]) >= 0) {
        if (secp256k1_fe_equal_var(&sc->keys[i].point.x, &p->x)) return &sc->keys[i];
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
    if (2 * sc->count > sc->table_size) return table_rebuild(sc, sc->table_size == 0 ? 16 : sc->table_size * 4);
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

static void put_u32(unsigned char *p, uint32_t v) {
    p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}

static int scalar_from(secp256k1_scalar *s, const unsigned char *b32) {
    int overflow;
    secp256k1_scalar_set_b32(s, b32, &overflow);
    return !overflow && !secp256k1_scalar_is_zero(s);
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
    secp256k1_gej acc, r, t, tneg, *pairs;
    secp256k1_ge ge, *pairs_affine, *lifted;
    secp256k1_fe *x;
    size_t *index;
    void *block = NULL;
    secp256k1_scalar s, tweak;
    unsigned char a33[33], ecdh33[33], hash[32], ser_k[4];
    unsigned char *state; /* per output: 0 remaining, 1 taken; bit 2: lifted known, bit 4: not liftable */
    size_t i, j, len, remaining = 0, found = 0;
    int any = 0, result;
    uint32_t k;

    secp256k1_gej_set_infinity(&acc);
    for (i = 0; i < n; i++) {
        if (!secp256k1_eckey_pubkey_parse(&ge, keys + 33 * i, 33)) continue;
        secp256k1_gej_add_ge_var(&acc, &acc, &ge, NULL);
        any = 1;
    }
    if (!any || secp256k1_gej_is_infinity(&acc)) return SCAN_NOT_ELIGIBLE;
    secp256k1_ge_set_gej_var(&ge, &acc);
    len = 33;
    secp256k1_eckey_pubkey_serialize(&ge, a33, &len, 1);
    if (fixed) {
        memcpy(hash, fixed, 32);
    } else {
        secp256k1_sha256 h = tag_inputs;
        secp256k1_sha256_write(&h, outpoint, 36);
        secp256k1_sha256_write(&h, a33, 33);
        secp256k1_sha256_finalize(&h, hash);
    }
    if (!scalar_from(&s, hash)) return SCAN_BAD_INPUT_HASH;
    secp256k1_scalar_mul(&s, &s, &sc->scan);
    /* one variable-base multiplication: (input_hash * b_scan) * A */
    secp256k1_gej_set_ge(&acc, &ge);
    secp256k1_ecmult(&ctx->ecmult_ctx, &r, &acc, &s, NULL);
    secp256k1_scalar_clear(&s);
    secp256k1_ge_set_gej_var(&ge, &r);
    len = 33;
    secp256k1_eckey_pubkey_serialize(&ge, ecdh33, &len, 1);

    /* one block for the per-output arrays (largest alignment first) */
    block = malloc((sizeof(secp256k1_gej) * 2 + sizeof(secp256k1_ge) * 3 + sizeof(secp256k1_fe) + sizeof(size_t) + 1) * (m + 1));
    if (block == NULL) return SCAN_NO_MEMORY;
    pairs = block;
    pairs_affine = (secp256k1_ge *)(pairs + 2 * (m + 1));
    lifted = pairs_affine + 2 * (m + 1);
    x = (secp256k1_fe *)(lifted + (m + 1));
    index = (size_t *)(x + (m + 1));
    state = (unsigned char *)(index + (m + 1));
    memset(state, 0, m + 1);
    for (j = 0; j < m; j++) {
        if (secp256k1_fe_set_b32(&x[j], xs + 32 * j)) remaining++;
        else state[j] = 1; /* x >= p: no point, pays no one */
    }

    for (k = 0; k < k_max && remaining > 0; k++) {
        size_t best = SIZE_MAX, unlifted = 0;
        int32_t best_label = -1;
        uint64_t sums_cost, outputs_cost;
        if (fixed) {
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
        comb_mul(&t, hash);

        for (j = 0; j < m; j++) if (!(state[j] & 1) && !(state[j] & 2)) unlifted++;
        sums_cost = (uint64_t)sc->count * (COST_ADD + remaining * COST_CMP);
        outputs_cost = unlifted * COST_SQRT + COST_INV + 2 * remaining * (COST_ADD + 100);
        if (sums_cost <= outputs_cost) {
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
        } else {
            /* O - T and O + T for each remaining output O (lifted with even y), looked up among
               the spend keys: O - T = B, or O + T = -B (then -O = T + B). One inversion for all. */
            size_t count = 0;
            int hit_unlabelled = 0;
            secp256k1_gej_neg(&tneg, &t);
            for (j = 0; j < m; j++) {
                if (state[j] & 1) continue;
                if (!(state[j] & 2)) {
                    state[j] |= 2;
                    if (!secp256k1_ge_set_xo_var(&lifted[j], &x[j], 0)) state[j] |= 4;
                }
                if (state[j] & 4) continue;
                secp256k1_gej_add_ge_var(&pairs[2 * count], &tneg, &lifted[j], NULL);
                secp256k1_gej_add_ge_var(&pairs[2 * count + 1], &t, &lifted[j], NULL);
                index[count++] = j;
            }
            secp256k1_ge_set_all_gej_var(pairs_affine, pairs, 2 * count);
            /* (it leaves the flags unset when every point is infinity, which O - T and O + T never
               both are; set them anyway) */
            for (i = 0; i < 2 * count; i++) pairs_affine[i].infinity = pairs[i].infinity;
            for (i = 0; i < count && !hit_unlabelled; i++) {
                for (len = 0; len < 2; len++) {
                    secp256k1_ge *p = &pairs_affine[2 * i + len];
                    int32_t label;
                    if (secp256k1_ge_is_infinity(p)) {
                        if (sc->infinite_label == -2) continue;
                        label = sc->infinite_label;
                    } else {
                        const spend_key *key;
                        secp256k1_fe y;
                        secp256k1_fe_normalize_var(&p->x);
                        key = table_find(sc, p);
                        if (key == NULL) continue;
                        y = p->y;
                        if (len == 1) secp256k1_fe_negate(&y, &y, 1);
                        secp256k1_fe_normalize_var(&y);
                        if (!secp256k1_fe_equal_var(&y, &key->point.y)) continue;
                        label = key->label;
                    }
                    if (label == -1) {
                        best = index[i];
                        best_label = -1;
                        hit_unlabelled = 1;
                        break;
                    }
                    if (best == SIZE_MAX) {
                        best = index[i];
                        best_label = label;
                    }
                }
            }
        }
        if (best == SIZE_MAX) break;
        state[best] |= 1;
        remaining--;
        put_u32(sc->out + MATCH_BYTES * found, (uint32_t)best);
        put_u32(sc->out + MATCH_BYTES * found + 4, k);
        put_u32(sc->out + MATCH_BYTES * found + 8, (uint32_t)best_label);
        memcpy(sc->out + MATCH_BYTES * found + 12, hash, 32);
        found++;
    }
    result = (int)found;
done:
    free(block);
    return result;
}

/* ------------------------------------------------------------------------------------------ */
/* N-API glue. */

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
    static const unsigned char FIXED[32] = {
        0x2b, 0x6e, 0x1c, 0x4d, 0x77, 0x10, 0x93, 0xa2, 0x5c, 0x0f, 0x31, 0x8e, 0x64, 0xd9, 0x02, 0x47,
        0xb8, 0x55, 0x1a, 0xe3, 0x9f, 0x70, 0x26, 0xc4, 0x81, 0x3d, 0x6a, 0xf5, 0x08, 0x92, 0x4e, 0x1b};
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
    result = scan_tx(sc, keys, nkeys / 33, outpoint, xs, nxs / 32, k_max, ec_only ? FIXED : NULL);
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

static napi_value init(napi_env env, napi_value exports) {
    napi_property_descriptor props[] = {
        {"createScanner", NULL, js_create_scanner, NULL, NULL, NULL, napi_default, NULL},
        {"addSpendKey", NULL, js_add_spend_key, NULL, NULL, NULL, napi_default, NULL},
        {"scan", NULL, js_scan, NULL, NULL, NULL, napi_default, NULL},
    };
    NAPI_CHECK(napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props));
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
