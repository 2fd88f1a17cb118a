import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Logger } from '@repo/service';
import {
  blindbitInfo,
  checkRange,
  blockIdentifier,
  filterData,
  IndexRangeError,
  readBlindBitBlocks,
  tweaksOf,
  utxosOf,
  type BlindBitBlock,
} from '../blindbit';
import type { TweakIndexStore } from '../store';

/** The folder of the .proto files (beside the sources; `dist/` reads them from `src/`). */
export const PROTO_DIR = join(__dirname, '..', '..', '..', 'src', 'tweak-index', 'proto');

/** Blocks one streamed or ranged request may ask (docs/silent-payments.md, "BlindBit OracleService"). */
export const GRPC_MAX_RANGE = 1_000;

/** Options of {@link createOracleGrpcServer}. */
export interface OracleServiceOptions {
  store: TweakIndexStore;
  /** SP_NETWORK (`InfoResponse.network` gives BlindBit's name of it). */
  network: string;
  logger: Logger;
  maxRange?: number;
}

function fail(error: unknown, logger: Logger): Partial<grpc.StatusObject> {
  if (error instanceof IndexRangeError) {
    return { code: error.kind === 'invalid' ? grpc.status.INVALID_ARGUMENT : grpc.status.NOT_FOUND, details: error.message };
  }
  logger.error({ err: error }, 'OracleService call failed');
  return { code: grpc.status.INTERNAL, details: 'internal error' };
}

function unary<Req>(logger: Logger, work: (req: Req) => Promise<object>): grpc.handleUnaryCall<Req, object> {
  return (call, callback) => {
    work(call.request).then(
      (answer) => callback(null, answer),
      (error: unknown) => callback(fail(error, logger)),
    );
  };
}

/** A height request: a non-negative integer, or INVALID_ARGUMENT. */
function height(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new IndexRangeError('invalid', `${name} must be a height`);
  return value;
}

/** Blocks read from the store at once while streaming (the memory bound of a stream). */
const STREAM_PAGE = 20;

function streamOf(
  options: OracleServiceOptions,
  message: (b: BlindBitBlock) => object,
): grpc.handleServerStreamingCall<{ start: number; end: number }, object> {
  const maxRange = options.maxRange ?? GRPC_MAX_RANGE;
  return (call: grpc.ServerWritableStream<{ start: number; end: number }, object>) => {
    void (async () => {
      const start = height(call.request.start, 'start');
      const end = height(call.request.end, 'end');
      await checkRange(options.store, start, end, maxRange);
      for (let from = start; from <= end && !call.cancelled; from += STREAM_PAGE) {
        for (const b of await readBlindBitBlocks(options.store, from, Math.min(end, from + STREAM_PAGE - 1), STREAM_PAGE)) {
          if (call.cancelled) return;
          // Waits for the client to read when its window is full (grpc-js's backpressure).
          if (!call.write(message(b))) await new Promise((resolve) => call.once('drain', resolve));
        }
      }
      call.end();
    })().catch((error: unknown) => call.emit('error', fail(error, options.logger)));
  };
}

/** The handlers of every OracleService method, over the index's store. */
export function oracleServiceHandlers(options: OracleServiceOptions): grpc.UntypedServiceImplementation {
  const { store, logger } = options;
  const one = async (h: unknown): Promise<BlindBitBlock> =>
    (await readBlindBitBlocks(store, height(h, 'block_height'), height(h, 'block_height'), 1))[0]!;
  const slim = (cutThrough: boolean) => (b: BlindBitBlock) => ({
    block_identifier: blockIdentifier(b.block),
    tweaks: tweaksOf(b.txs, { cutThrough }),
    new_utxos_filter: filterData(b.block, 'newUtxos'),
    spent_utxos_filter: filterData(b.block, 'spent'),
  });
  const full = (cutThrough: boolean) => (b: BlindBitBlock) => ({ ...slim(cutThrough)(b), utxos: utxosOf(b), spent_utxos: b.spentHashes });
  return {
    StreamBlockBatchSlim: streamOf(options, slim(true)),
    StreamBlockBatchFull: streamOf(options, full(true)),
    StreamBlockBatchSlimStatic: streamOf(options, slim(false)),
    StreamBlockBatchFullStatic: streamOf(options, full(false)),
    GetTweakArray: unary(logger, async (req: { block_height: number }) => {
      const b = await one(req.block_height);
      return { block_identifier: blockIdentifier(b.block), tweaks: tweaksOf(b.txs, { cutThrough: true }) };
    }),
    GetTweakIndexArray: unary(logger, async (req: { block_height: number; dust_limit: number }) => {
      const b = await one(req.block_height);
      return {
        block_identifier: blockIdentifier(b.block),
        tweaks: tweaksOf(b.txs, { dustLimit: BigInt(height(req.dust_limit, 'dust_limit')) }),
      };
    }),
    GetUTXOArray: unary(logger, async (req: { block_height: number }) => {
      const b = await one(req.block_height);
      return { block_identifier: blockIdentifier(b.block), utxos: utxosOf(b) };
    }),
    GetFilter: unary(logger, async (req: { block_height: number; filter_type: string }) => {
      const type = req.filter_type === 'FILTER_TYPE_SPENT' ? 'spent' : req.filter_type === 'FILTER_TYPE_NEW_UTXOS' ? 'newUtxos' : undefined;
      if (type === undefined) throw new IndexRangeError('invalid', 'filter_type must be FILTER_TYPE_SPENT or FILTER_TYPE_NEW_UTXOS');
      const b = await one(req.block_height);
      return { block_identifier: blockIdentifier(b.block), filter_data: filterData(b.block, type) };
    }),
    GetSpentOutpointsIndex: unary(logger, async (req: { block_height: number }) => {
      const b = await one(req.block_height);
      return { block_identifier: blockIdentifier(b.block), data: b.spentHashes };
    }),
    GetInfo: unary(logger, () => blindbitInfo(store, options.network)),
    GetBestBlockHeight: unary(logger, async () => {
      const tip = await store.tip();
      if (tip === undefined) throw new IndexRangeError('not-found', 'nothing is indexed yet');
      return { block_height: tip.height };
    }),
    GetBlockHashByHeight: unary(logger, async (req: { block_height: number }) => {
      const h = height(req.block_height, 'block_height');
      const [block] = await store.blocks(h, h);
      if (block === undefined) throw new IndexRangeError('not-found', `height ${h} is not indexed`);
      return { block_hash: Buffer.from(block.hash, 'hex') };
    }),
  };
}

/** Loads the OracleService definition from PROTO_DIR (snake_case fields, 64-bit integers as numbers, enums as names). */
export function loadOracleService(): grpc.ServiceDefinition {
  const definition = protoLoader.loadSync('oracle_service.proto', {
    includeDirs: [PROTO_DIR],
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
  });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    blindbit: { oracle: { v1: { OracleService: { service: grpc.ServiceDefinition } } } };
  };
  return pkg.blindbit.oracle.v1.OracleService.service;
}

/** The gRPC server with OracleService (not bound: the caller binds INDEX_GRPC_PORT and shuts it down). */
export function createOracleGrpcServer(options: OracleServiceOptions): grpc.Server {
  const server = new grpc.Server({ 'grpc.max_concurrent_streams': 16 });
  server.addService(loadOracleService(), oracleServiceHandlers(options));
  return server;
}
