import { createAsyncApiMessageCheck, createContractRecorder, createMessageRecorder, createOpenApiCheck } from '@repo/api-contract/testing';
import { ASYNCAPI } from '../../src/asyncapi';
import { OPENAPI } from '../../src/openapi';

/**
 * Every HTTP answer a test of this suite gets (`startRelay` attaches `contract` to the HTTP
 * server) is checked against the OpenAPI document, and every WebSocket message a `TestClient`
 * receives against the AsyncAPI document; `contract-setup.ts` verifies both after each file.
 */
export const contract = createContractRecorder(createOpenApiCheck(OPENAPI), { name: 'relay OpenAPI document' });
export const messages = createMessageRecorder(createAsyncApiMessageCheck(ASYNCAPI), { name: 'relay AsyncAPI document' });
