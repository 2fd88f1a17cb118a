import { verifyAfterAll } from '@repo/api-contract/testing';
import { contract, messages } from './contract';

verifyAfterAll(contract, 'relay-http');
verifyAfterAll(messages, 'relay-ws');
