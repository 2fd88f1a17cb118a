import { verifyAfterAll } from '@repo/api-contract/testing';
import { contract } from './contract';

verifyAfterAll(contract, 'rpc-proxy');
