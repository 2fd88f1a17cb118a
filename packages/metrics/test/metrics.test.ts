import express from 'express';
import request from 'supertest';
import { Counter, Histogram, Registry } from 'prom-client';
import { createMetrics, seriesCounter, seriesHistogram } from '../src';
import { parseMetrics, promtoolCheck, sampleValue } from '../src/testing';

function app() {
  const metrics = createMetrics({ service: 'test', processMetrics: false });
  const hits = metrics.counter({ name: 'test_hits_total', help: 'hits', labelNames: ['kind'] as const });
  const server = express();
  server.use(metrics.middleware());
  server.get('/metrics', metrics.handler());
  const router = express.Router();
  router.get('/:key', (_req, res) => {
    hits.inc({ kind: 'item' });
    res.json({ ok: true });
  });
  server.use('/v1', router);
  server.use((req, res, next) => {
    if (!req.path.startsWith('/files/')) return next();
    res.locals.route = '/files/:name';
    res.json({ ok: true });
  });
  return { server, metrics };
}

describe('createMetrics', () => {
  it('counts requests by route pattern and status, never by raw path', async () => {
    const { server } = app();
    await request(server).get('/v1/alpha').expect(200);
    await request(server).get('/v1/beta').expect(200);
    await request(server).get('/nowhere/at/all').expect(404);
    await request(server).get('/files/one').expect(200);
    const res = await request(server).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parseMetrics(res.text);
    expect(sampleValue(families, 'http_requests_total', { route: '/v1/:key', status: '200', method: 'GET' })).toBe(2);
    expect(sampleValue(families, 'http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(sampleValue(families, 'http_requests_total', { route: '/files/:name', status: '200' })).toBe(1);
    expect(families.get('http_request_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(sampleValue(families, 'test_hits_total', { kind: 'item' })).toBe(2);
    expect(res.text).not.toContain('alpha');
    expect(res.text).not.toContain('/nowhere');
  });

  it('answers the Prometheus text format even when Accept prefers OpenMetrics (as Prometheus itself sends), names kept', async () => {
    const { server } = app();
    await request(server).get('/v1/alpha').expect(200);
    for (let i = 0; i < 2; i++) {
      const res = await request(server)
        .get('/metrics')
        .set('Accept', 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5')
        .expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(sampleValue(parseMetrics(res.text), 'test_hits_total', { kind: 'item' })).toBe(1);
    }
  });

  it('reads an unlabelled histogram count', () => {
    const metrics = createMetrics({ service: 'test', processMetrics: false });
    const latency = metrics.histogram({ name: 'test_latency_seconds', help: 'latency', buckets: [0.1, 1] });
    latency.observe(0.05);
    latency.observe(0.5);
    return metrics.registry.metrics().then((text) => expect(sampleValue(parseMetrics(text), 'test_latency_seconds')).toBe(2));
  });

  it('rejects malformed text', () => {
    expect(() => parseMetrics('# TYPE x counter\nx{a="1" 3\n')).toThrow();
  });
});

describe('process metrics', () => {
  it('are collected only once start() is called (createApp builds, start() starts), once', async () => {
    const metrics = createMetrics({ service: 'test' });
    const server = express();
    server.get('/metrics', metrics.handler());
    const before = parseMetrics((await request(server).get('/metrics').expect(200)).text);
    expect(before.has('process_cpu_seconds_total')).toBe(false);
    metrics.start();
    metrics.start();
    const after = parseMetrics((await request(server).get('/metrics').expect(200)).text);
    expect(after.get('process_cpu_seconds_total')?.type).toBe('COUNTER');
    expect(after.has('nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('pass promtool check metrics: no gauge named like a counter (the active handles are by type)', async () => {
    const metrics = createMetrics({ service: 'test' });
    metrics.start();
    metrics.observeRequest('GET', '/v1/:key', 200, 0.002);
    const text = await metrics.registry.metrics();
    expect(promtoolCheck(text)).toEqual({ status: 0, problems: [] });
    const families = parseMetrics(text);
    expect(families.get('nodejs_active_handles')?.type).toBe('GAUGE');
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      expect(families.has(name)).toBe(false);
    }
  });

  it('are judged by promtool, which flags a gauge named like a counter', () => {
    const verdict = promtoolCheck('# HELP x_total a gauge\n# TYPE x_total gauge\nx_total 1\n');
    expect(verdict.status).not.toBe(0);
    expect(verdict.problems.join('\n')).toMatch(/x_total/);
  });
});

describe('readCounter', () => {
  it('reports the value kept elsewhere at each scrape', async () => {
    const metrics = createMetrics({ service: 'test', processMetrics: false });
    let hits = 3;
    metrics.readCounter('test_cache_hits_total', 'hits kept by a cache', () => hits);
    const server = express();
    server.get('/metrics', metrics.handler());
    const scrape = async () => sampleValue(parseMetrics((await request(server).get('/metrics').expect(200)).text), 'test_cache_hits_total');
    expect(await scrape()).toBe(3);
    hits = 10;
    expect(await scrape()).toBe(10);
  });
});

describe('seriesCounter and seriesHistogram', () => {
  /** The same observations in prom-client's own Counter and Histogram and in series kept by this package. */
  function both() {
    const theirs = new Registry();
    const ours = new Registry();
    const definition = { name: 'test_requests_total', help: 'requests', labelNames: ['method', 'status'] };
    const timing = { name: 'test_duration_seconds', help: 'durations', labelNames: ['method', 'status'], buckets: [0.001, 0.01, 0.1] };
    const counter = new Counter({ ...definition, registers: [theirs] });
    const histogram = new Histogram({ ...timing, registers: [theirs] });
    const seriesCount = seriesCounter(ours, definition);
    const seriesTime = seriesHistogram(ours, timing);
    const observe = (method: string, status: string, seconds: number) => {
      counter.inc({ method, status });
      histogram.observe({ method, status }, seconds);
      seriesCount.series(method, status).inc();
      seriesTime.series(method, status).observe(seconds);
    };
    return { theirs, ours, observe, seriesTime };
  }

  it('are rendered in the very text prom-client writes for its own, at every bound and beyond the last', async () => {
    const { theirs, ours, observe } = both();
    for (const [method, status, seconds] of [
      ['GET', '200', 0.0005],
      ['GET', '200', 0.001],
      ['GET', '200', 0.05],
      ['POST', '500', 2.5],
      ['GET', '404', 0.1],
      ['GET', '200', 0.0105],
    ] as const) {
      observe(method, status, seconds);
    }
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('test_duration_seconds_bucket{le="0.001",method="GET",status="200"} 2');
    expect(text).toContain('test_duration_seconds_bucket{le="+Inf",method="POST",status="500"} 1');
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });

  it('keep counting into series held across a reset, from zero', async () => {
    const { theirs, ours, observe } = both();
    const held = seriesCounter(new Registry(), { name: 'unused_total', help: 'x', labelNames: [] });
    held.series().inc(2);
    observe('GET', '200', 0.002);
    theirs.resetMetrics();
    ours.resetMetrics();
    observe('GET', '200', 0.02);
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('test_requests_total{method="GET",status="200"} 1\n');
    expect(text).toContain('test_duration_seconds_count{method="GET",status="200"} 1\n');
    expect(text).toContain('test_duration_seconds_bucket{le="0.01",method="GET",status="200"} 0\n');
  });

  it('give the same series object for the same label values, a distinct one for others', () => {
    const counter = seriesCounter(new Registry(), { name: 'same_total', help: 'x', labelNames: ['a'] });
    expect(counter.series('x')).toBe(counter.series('x'));
    expect(counter.series('x')).not.toBe(counter.series('y'));
  });

  it('refuse a wrong number of label values and a value that is not a finite number', () => {
    const { seriesTime } = both();
    expect(() => seriesTime.series('GET')).toThrow('2 label values expected, got 1');
    expect(() => seriesTime.series('GET', '200').observe(Number.NaN)).toThrow('not a finite number');
  });
});
