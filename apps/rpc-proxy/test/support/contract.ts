import { createContractRecorder, createOpenRpcCheck } from '@repo/api-contract/testing';
import { OPENRPC } from '../../src/openrpc';

/**
 * Every answer a test of this suite gets is checked against the OpenRPC document: the HTTP side
 * against its `x-http`, each JSON-RPC answer against its method (`startProxy` and the readiness
 * tests attach it to each server; `contract-setup.ts` verifies it after each file).
 */
export const contract = createContractRecorder(createOpenRpcCheck(OPENRPC), { name: 'rpc-proxy OpenRPC document' });
