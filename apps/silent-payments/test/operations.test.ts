import { buildSilentPayment, plainScript } from '@repo/chain-double';
import { sampleValue, scrape } from '@repo/metrics/testing';
import { getJson, postJson, useChainDouble } from './support/service';

// Operations (docs/README.md, "Operations"): metrics, request ids and trusted proxies, over real sockets.
describe('silent-payments operations', () => {
  const chain = useChainDouble('sp-ops-');

  it('GET /metrics: scanned height, lag, blocks scanned and payments found move as blocks come', async () => {
    const { node } = chain;
    const running = await chain.start();
    await chain.synced();
    const before = await scrape(`${running.url}/metrics`);
    const height = node.tipHeight();
    expect(sampleValue(before, 'silent_payments_scanned_height')).toBe(height);
    expect(sampleValue(before, 'silent_payments_tip_height')).toBe(height);
    expect(sampleValue(before, 'silent_payments_lag_blocks')).toBe(0);
    expect(sampleValue(before, 'silent_payments_scanner_state', { state: 'synced' })).toBe(1);
    expect(sampleValue(before, 'silent_payments_scanner_state', { state: 'retrying' })).toBe(0);
    const blocksBefore = sampleValue(before, 'silent_payments_blocks_scanned_total')!;
    const foundBefore = sampleValue(before, 'silent_payments_found_total')!;

    const address = (await postJson<{ address: string }>(running.url, '/generate-address', { label: 'ops', amount: 0.5 })).body.address;
    const paid = buildSilentPayment([node.fund('p2wpkh')], [{ address, sats: 20_000_000n }], plainScript(7));
    node.mine(1, [paid.hex]);
    node.mine(2);
    await chain.synced();

    const after = await scrape(`${running.url}/metrics`);
    expect(sampleValue(after, 'silent_payments_scanned_height')).toBe(node.tipHeight());
    expect(sampleValue(after, 'silent_payments_blocks_scanned_total')! - blocksBefore).toBe(node.tipHeight() - height);
    expect(sampleValue(after, 'silent_payments_found_total')! - foundBefore).toBe(1);
    expect(sampleValue(after, 'http_requests_total', { method: 'POST', route: '/generate-address', status: '201' })).toBe(1);
    expect(sampleValue(after, 'http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBe(1);
  });

  it('echoes a request id; takes the proxy one and keys the rate limit on X-Forwarded-For only behind TRUST_PROXY', async () => {
    const running = await chain.start({ SCANNER_ENABLED: 'false', TRUST_PROXY: '1', RATE_LIMIT_PER_MINUTE: '1' });
    const get = (client: string, id?: string) =>
      fetch(`${running.url}/payments/none`, { headers: { 'X-Forwarded-For': client, ...(id ? { 'X-Request-Id': id } : {}) } });
    const first = await get('198.51.100.1', 'nginx-1');
    expect(first.headers.get('x-request-id')).toBe('nginx-1');
    expect(first.status).not.toBe(429);
    expect((await get('198.51.100.2')).status).not.toBe(429);
    expect((await get('198.51.100.1')).status).toBe(429);
    const health = await getJson(running.url, '/health');
    expect(health.status).toBe(200);
  });
});
