import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** The .proto files as a wallet developer would take them (loaded dynamically, no generated code). */
const PROTO_DIR = join(__dirname, '..', '..', '..', 'src', 'tweak-index', 'proto');

type Unary = (request: object, callback: (error: grpc.ServiceError | null, answer: unknown) => void) => void;

/** A BlindBit OracleService client from the proto alone: unary calls as promises, streams collected. */
export interface OracleTestClient {
  call<T = Record<string, unknown>>(method: string, request?: object): Promise<T>;
  stream<T = Record<string, unknown>>(method: string, request: object): Promise<T[]>;
  close(): void;
}

/** Connects to 127.0.0.1:`port` without TLS. */
export function connectOracle(port: number): OracleTestClient {
  const definition = protoLoader.loadSync('oracle_service.proto', {
    includeDirs: [PROTO_DIR],
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
  });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    blindbit: { oracle: { v1: { OracleService: new (address: string, credentials: grpc.ChannelCredentials) => grpc.Client } } };
  };
  const client = new pkg.blindbit.oracle.v1.OracleService(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const unaryMethods = client as unknown as Record<string, Unary>;
  const streamMethods = client as unknown as Record<string, (request: object) => grpc.ClientReadableStream<unknown>>;
  return {
    call<T>(method: string, request: object = {}) {
      return new Promise<T>((resolve, reject) => {
        unaryMethods[method]!.call(client, request, (error, answer) => (error ? reject(error) : resolve(answer as T)));
      });
    },
    stream<T>(method: string, request: object) {
      return new Promise<T[]>((resolve, reject) => {
        const got: T[] = [];
        const s = streamMethods[method]!.call(client, request);
        s.on('data', (m: T) => got.push(m));
        s.on('error', reject);
        s.on('end', () => resolve(got));
      });
    },
    close() {
      client.close();
    },
  };
}
