import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SampleProcess } from '../sample/sample-process.js';
import { databaseUrl, openPostgresDataSource } from '../support/postgres.js';

interface ExportedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  startUs: number;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  events: string[];
  pid: number;
}

const read = (file: string): ExportedSpan[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ExportedSpan);

/**
 * The sample on PostgreSQL as two processes: one serves HTTP and enqueues (worker off), the other
 * runs the jobs. The trace context crosses the database, not process memory.
 */
describe('a trace across the database (PostgreSQL, the worker in a second process)', () => {
  const name = `trace_${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-trace-'));
  let url: URL;

  beforeAll(async () => {
    const admin = await openPostgresDataSource(1);
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.destroy();
    url = new URL(databaseUrl());
    url.pathname = `/${name}`;
  });

  afterAll(async () => {
    const admin = await openPostgresDataSource(1);
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes the request, its send span and both attempts of a job that failed once one trace', async () => {
    const producerSpans = join(dir, 'producer.jsonl');
    const workerSpans = join(dir, 'worker.jsonl');
    const producer = await SampleProcess.start({ DATABASE_URL: url.toString(), SAMPLE_WORKER: '0', SAMPLE_TRACING: `file:${producerSpans}` });
    const worker = await SampleProcess.start({ DATABASE_URL: url.toString(), SAMPLE_TRACING: `file:${workerSpans}` });
    let jobId = '';
    try {
      const { json } = await producer.request('POST', '/orders', { item: 'lamp', failFirstAttempt: true });
      expect(json.committed).toBe(true);
      jobId = json.jobId;
      await producer.jobSettled(jobId, 'succeeded');
    } finally {
      await producer.stop();
      await worker.stop();
    }
    const fromProducer = read(producerSpans);
    const fromWorker = read(workerSpans);
    const request = fromProducer.find((s) => s.name === 'POST /orders')!;
    const trace = [...fromProducer, ...fromWorker].filter((s) => s.traceId === request.traceId).sort((a, b) => a.startUs - b.startUs);
    expect(trace.map((s) => s.name)).toEqual(['POST /orders', 'send default', 'process default', 'process default']);
    const [, send, first, second] = trace as [ExportedSpan, ExportedSpan, ExportedSpan, ExportedSpan];
    expect(send).toMatchObject({ parentSpanId: request.spanId, pid: request.pid, attributes: { 'messaging.operation.type': 'send', 'messaging.message.id': jobId } });
    for (const [i, attempt] of [first, second].entries()) {
      expect(attempt.parentSpanId).toBe(send.spanId);
      expect(attempt.pid).not.toBe(request.pid);
      expect(attempt.attributes).toMatchObject({
        'messaging.system': 'durable_scheduler',
        'messaging.operation.type': 'process',
        'messaging.destination.name': 'default',
        'messaging.message.id': jobId,
        'durable_scheduler.job.name': 'orders.confirm',
        'durable_scheduler.job.attempt': i + 1,
        'durable_scheduler.outcome': 'applied',
      });
    }
    expect(first.status.code).toBe(2);
    expect(first.attributes).toMatchObject({ 'error.type': 'Error', 'durable_scheduler.job.state': 'scheduled' });
    expect(second.status.code).toBe(0);
    expect(second.attributes['durable_scheduler.job.state']).toBe('succeeded');
    // The tree, for the closing note and for anyone reading a failure.
    const depth = (s: ExportedSpan): number => (s.parentSpanId ? 1 + depth(trace.find((p) => p.spanId === s.parentSpanId) ?? ({} as ExportedSpan)) : 0);
    process.stdout.write(`${trace.map((s) => `${'  '.repeat(depth(s))}${s.name} [pid ${s.pid}]${s.attributes['durable_scheduler.job.attempt'] ? ` attempt ${s.attributes['durable_scheduler.job.attempt']} → ${s.attributes['durable_scheduler.job.state']}` : ''}`).join('\n')}\n`);
  });
});

