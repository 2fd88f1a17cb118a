import { createContractRecorder, createOpenApiCheck } from '@repo/api-contract/testing';
import { OPENAPI } from '../../src/openapi';

/**
 * Every answer a test of this suite gets is checked against the OpenAPI document
 * (`startServer` attaches it to each server; `contract-setup.ts` verifies it after each file).
 */
export const contract = createContractRecorder(createOpenApiCheck(OPENAPI), { name: 'config-server OpenAPI document' });
