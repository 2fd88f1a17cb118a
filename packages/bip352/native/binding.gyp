{
  # The BIP-352 scanner addon. It compiles the libsecp256k1 source shipped by the `secp256k1`
  # npm package (the same library the `native` backend's binding uses) into the addon itself,
  # with the configuration that binding uses on x86-64 (64-bit limbs, assembly field code, the
  # GLV endomorphism, 15-bit ecmult tables), and the reader of getblock answers (rpc-block.c).
  'variables': {
    'secp256k1_src': '<!(node -p "require(\'path\').join(require(\'path\').dirname(require.resolve(\'secp256k1/package.json\', { paths: [\'..\'] })), \'src\', \'secp256k1\')")',
  },
  'targets': [
    {
      'target_name': 'bip352_scan',
      'sources': ['scan.c', 'rpc-block.c'],
      'include_dirs': ['<(secp256k1_src)', '<(secp256k1_src)/src'],
      'cflags': ['-O2', '-Wno-unused-function', '-Wno-nonnull-compare', '-Wno-unused-parameter', '-Wno-sign-compare'],
      'defines': [
        'ECMULT_GEN_PREC_BITS=4',
        'ECMULT_WINDOW_SIZE=15',
        'USE_ENDOMORPHISM=1',
        'USE_NUM_NONE=1',
        'USE_FIELD_INV_BUILTIN=1',
        'USE_SCALAR_INV_BUILTIN=1',
        'NAPI_VERSION=6',
      ],
      'conditions': [
        ['target_arch=="x64" and OS!="win"', {
          'defines': ['HAVE___INT128=1', 'USE_ASM_X86_64=1', 'USE_FIELD_5X52=1', 'USE_SCALAR_4X64=1'],
        }, {
          'defines': ['USE_FIELD_10X26=1', 'USE_SCALAR_8X32=1'],
        }],
      ],
    },
  ],
}
