/**
 * BIP-352 constants (https://github.com/bitcoin/bips/blob/master/bip-0352.mediawiki, v1.1).
 */

/**
 * Per-group recipient limit K_max (BIP-352 v1.1, "Creating outputs" and "Scanning"): a sender
 * fails when one B_scan group holds more than K_max addresses, and a receiver stops looking for
 * further outputs of a transaction once k reaches K_max, so an adversarial transaction with
 * thousands of outputs cannot make scanning quadratic.
 */
export const K_MAX = 2323;

/** secp256k1 group order n. */
export const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * NUMS point H of BIP-341 ("Constructing and spending Taproot outputs"): x = SHA256 of the
 * uncompressed encoding of G. A script-path spend whose internal key is H is skipped for the
 * shared secret (BIP-352 "Inputs For Shared Secret Derivation", P2TR).
 */
export const NUMS_H_HEX = '50929b74c1a04954b78b4b6035e97a5e078a5a0f28ec96d547bfee9ace803ac0';

/** Tagged-hash tags of BIP-352 (hash_tag(x) = SHA256(SHA256(tag) || SHA256(tag) || x), BIP-340). */
export const TAG_INPUTS = 'BIP0352/Inputs';
export const TAG_SHARED_SECRET = 'BIP0352/SharedSecret';
export const TAG_LABEL = 'BIP0352/Label';

/** Recommended maximum address length (BIP-352 "Address encoding", after BIP-173's checksum design). */
export const MAX_ADDRESS_LENGTH = 1023;

/** Bech32m human-readable parts: "sp" on mainnet, "tsp" on the test networks. */
export const HRP_MAINNET = 'sp';
export const HRP_TESTNET = 'tsp';

/** Largest label index: m is serialised with ser32. */
export const MAX_LABEL = 0xffffffff;
