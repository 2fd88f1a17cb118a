import { ElectrumError, intParam, RPC_ERRORS, type ElectrumContext, type ElectrumMethods } from '../protocol';

const SUBSCRIBED = 'headers';

async function headerAt(ctx: ElectrumContext, height: number): Promise<{ height: number; hex: string }> {
  const [block] = await ctx.feed.store.blocks(height, height);
  if (block === undefined) throw new ElectrumError(RPC_ERRORS.notFound, `height ${height} is not indexed`);
  return { height, hex: Buffer.from(block.header).toString('hex') };
}

/**
 * `blockchain.headers.subscribe` (the tip now, then one notification per new block) and
 * `blockchain.block.header` (a header by height; no checkpoint proofs: `cp_height` must be 0).
 */
export const headerMethods: ElectrumMethods = {
  'blockchain.headers.subscribe': async (ctx) => {
    const tip = await ctx.feed.store.tip();
    if (tip === undefined) throw new ElectrumError(RPC_ERRORS.notFound, 'nothing is indexed yet');
    if (!ctx.state.has(SUBSCRIBED)) {
      const onBlock = (height: number): void => {
        void headerAt(ctx, height)
          .then((header) => ctx.notify('blockchain.headers.subscribe', [header]))
          .catch(() => undefined);
      };
      ctx.state.set(SUBSCRIBED, onBlock);
      ctx.feed.events.on('block', onBlock);
      ctx.onClose(() => ctx.feed.events.off('block', onBlock));
    }
    return headerAt(ctx, tip.height);
  },
  'blockchain.block.header': async (ctx, params) => {
    const height = intParam(params, 0, 'height');
    if (intParam(params, 1, 'cp_height', 0) !== 0) throw new ElectrumError(RPC_ERRORS.invalidParams, 'cp_height is not supported (0 only)');
    return (await headerAt(ctx, height)).hex;
  },
};
