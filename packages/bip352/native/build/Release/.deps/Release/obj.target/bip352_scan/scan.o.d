cmd_Release/obj.target/bip352_scan/scan.o := cc -o Release/obj.target/bip352_scan/scan.o ../scan.c '-DNODE_GYP_MODULE_NAME=bip352_scan' '-DUSING_UV_SHARED=1' '-DUSING_V8_SHARED=1' '-DV8_DEPRECATION_WARNINGS=1' '-D_GLIBCXX_USE_CXX11_ABI=1' '-D_FILE_OFFSET_BITS=64' '-D_LARGEFILE_SOURCE' '-D__STDC_FORMAT_MACROS' '-DOPENSSL_NO_PINSHARED' '-DOPENSSL_THREADS' '-DECMULT_GEN_PREC_BITS=4' '-DECMULT_WINDOW_SIZE=15' '-DUSE_ENDOMORPHISM=1' '-DUSE_NUM_NONE=1' '-DUSE_FIELD_INV_BUILTIN=1' '-DUSE_SCALAR_INV_BUILTIN=1' '-DNAPI_VERSION=6' '-DHAVE___INT128=1' '-DUSE_ASM_X86_64=1' '-DUSE_FIELD_5X52=1' '-DUSE_SCALAR_4X64=1' '-DBUILDING_NODE_EXTENSION' -I/usr/include/node -I/usr/src -I/usr/deps/openssl/config -I/usr/deps/openssl/openssl/include -I/usr/deps/uv/include -I/usr/deps/zlib -I/usr/deps/v8/include -I/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1 -I/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src  -fPIC -pthread -Wall -Wextra -Wno-unused-parameter -O2 -Wno-unused-function -Wno-nonnull-compare -Wno-unused-parameter -Wno-sign-compare -m64 -O3 -fno-omit-frame-pointer  -MMD -MF ./Release/.deps/Release/obj.target/bip352_scan/scan.o.d.raw   -c
Release/obj.target/bip352_scan/scan.o: ../scan.c \
 /usr/include/node/node_api.h /usr/include/node/js_native_api.h \
 /usr/include/node/js_native_api_types.h \
 /usr/include/node/node_api_types.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/secp256k1.c \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/include/secp256k1.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/include/secp256k1_preallocated.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/include/secp256k1.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/util.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/num_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/num.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/field_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/field_5x52_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/field.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/field_5x52.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/field_5x52_asm_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/scalar_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/scalar.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/scalar_4x64.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/scalar_4x64_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/group_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/group.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecmult_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecmult.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/scratch.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecmult_const_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecmult_const.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecmult_gen_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecmult_gen.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/hash_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/hash.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecdsa_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecdsa.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/eckey_impl.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/eckey.h \
 /work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/scratch_impl.h
../scan.c:
/usr/include/node/node_api.h:
/usr/include/node/js_native_api.h:
/usr/include/node/js_native_api_types.h:
/usr/include/node/node_api_types.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/secp256k1.c:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/include/secp256k1.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/include/secp256k1_preallocated.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/include/secp256k1.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/util.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/num_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/num.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/field_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/field_5x52_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/field.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/field_5x52.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/field_5x52_asm_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/scalar_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/scalar.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/scalar_4x64.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/scalar_4x64_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/group_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/group.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecmult_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecmult.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/scratch.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecmult_const_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecmult_const.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecmult_gen_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecmult_gen.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/hash_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/hash.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecdsa_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/ecdsa.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/eckey_impl.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/eckey.h:
/work/main/node_modules/.pnpm/secp256k1@5.0.2/node_modules/secp256k1/src/secp256k1/src/scratch_impl.h:
