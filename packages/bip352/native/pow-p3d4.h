/*
 * The addition chain of r = a^((p-3)/4), p the field prime, written once for the scalar field
 * elements (scan.c's fe_pow_p3d4) and for the eight-lane ones (ecmult-lanes.h's pow_run).
 * (p-3)/4 in binary: 223 ones, 0, 22 ones, 0000, 1011 (the chain of libsecp256k1's fe_sqrt,
 * whose exponent (p+1)/4 ends in 0000 1100 instead): 255 squarings, 13 multiplications.
 * T: the element type; SQR_N(r, a, n): r = a^(2^n), r may be a; MUL(r, a, b): r = a b, r may be
 * a (not b); r and a pointers to T, r not a.
 */
#define POW_P3D4_CHAIN(T, SQR_N, MUL, r, a)                                     \
    do {                                                                        \
        T x2, x3, x6, x9, x11, x22, x44, x88, x176, x220, x223, t1;             \
        SQR_N(&x2, (a), 1);                                                     \
        MUL(&x2, &x2, (a));                                                     \
        SQR_N(&x3, &x2, 1);                                                     \
        MUL(&x3, &x3, (a));                                                     \
        SQR_N(&x6, &x3, 3);                                                     \
        MUL(&x6, &x6, &x3);                                                     \
        SQR_N(&x9, &x6, 3);                                                     \
        MUL(&x9, &x9, &x3);                                                     \
        SQR_N(&x11, &x9, 2);                                                    \
        MUL(&x11, &x11, &x2);                                                   \
        SQR_N(&x22, &x11, 11);                                                  \
        MUL(&x22, &x22, &x11);                                                  \
        SQR_N(&x44, &x22, 22);                                                  \
        MUL(&x44, &x44, &x22);                                                  \
        SQR_N(&x88, &x44, 44);                                                  \
        MUL(&x88, &x88, &x44);                                                  \
        SQR_N(&x176, &x88, 88);                                                 \
        MUL(&x176, &x176, &x88);                                                \
        SQR_N(&x220, &x176, 44);                                                \
        MUL(&x220, &x220, &x44);                                                \
        SQR_N(&x223, &x220, 3);                                                 \
        MUL(&x223, &x223, &x3);                                                 \
        SQR_N(&t1, &x223, 23);                                                  \
        MUL(&t1, &t1, &x22);                                                    \
        SQR_N(&t1, &t1, 5);                                                     \
        MUL(&t1, &t1, (a)); /* ...0000 1 */                                     \
        SQR_N(&t1, &t1, 2); /* 0 */                                             \
        MUL(&t1, &t1, (a)); /* 1 */                                             \
        SQR_N(&t1, &t1, 1);                                                     \
        MUL((r), &t1, (a)); /* 1 */                                             \
    } while (0)
