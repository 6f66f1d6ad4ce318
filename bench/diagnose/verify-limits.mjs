// What judging limits adds to `verifyHistory` (docs/verify.md#how-limits-are-judged) on PostgreSQL:
// a history written by the store's own claims and outcomes (jobs of 100 keys, each key and the queue
// capped, in batches), then verify over it twice: with the limits' changes in the audit log (the
// second pass reads the history again in log order and judges every start), and with them removed
// from the log (no limit known: the pass reads nothing). Reported: entries per second each way,
// starts judged, and peak resident memory.
// Usage: node bench/diagnose/verify-limits.mjs [--jobs 100000]
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { PostgresJobStore, verifyHistory } from '../../dist/lib/index.js';
import { fmt, openDataSource, postgres, schemaName, table } from '../support.mjs';

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '100000' } } });
const total = Number(values.jobs);
const server = await postgres();
const schema = schemaName('verifylim');
const dataSource = await openDataSource(server.url, 4);
try {
  const store = new PostgresJobStore({ dataSource, schema });
  await store.migrate();
  for (let k = 0; k < 100; k++) await store.concurrencyLimitSet({ target: { key: `tenant-${k}` }, max: 50 });
  await store.concurrencyLimitSet({ target: { queue: 'default' }, max: 2_000 });
  await dataSource.query(`UPDATE ${store.naming.audit} SET at = at - interval '1 hour'`);
  const filled = performance.now();
  for (let from = 0; from < total; from += 1_000) {
    const n = Math.min(1_000, total - from);
    await store.jobEnqueueMany({ jobs: Array.from({ length: n }, (_, i) => ({ name: 'work', payload: {}, concurrencyKey: `tenant-${(from + i) % 100}` })) });
    for (;;) {
      const claimed = await store.jobClaim({ workerId: 'bench', limit: 500, queues: ['default'], leaseMs: 60_000 });
      if (claimed.length === 0) break;
      await store.jobCompleteMany({ workerId: 'bench', outcomes: claimed.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' })) });
    }
  }
  await dataSource.query(`VACUUM ANALYZE ${store.naming.history}`);
  const fillSeconds = (performance.now() - filled) / 1000;

  const run = async (label) => {
    let peak = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
    const started = performance.now();
    const report = await verifyHistory(store);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    return [label, fmt(report.checked.entries), `${seconds.toFixed(1)} s`, fmt(report.checked.entries / seconds), fmt(report.checked.capStarts), String(report.violationCount), `${Math.round(peak / 2 ** 20)} MiB`];
  };
  const rows = [];
  // Alternating, twice each, so a warm cache favours neither.
  const saved = await dataSource.query(`SELECT * FROM ${store.naming.audit}`);
  for (let round = 0; round < 2; round++) {
    rows.push(await run('limits in the log'));
    await dataSource.query(`DELETE FROM ${store.naming.audit}`);
    rows.push(await run('no limit in the log'));
    for (const row of saved) {
      await dataSource.query(`INSERT INTO ${store.naming.audit} (at, actor, action, target, detail) VALUES ($1, $2, $3, $4, $5)`, [row.at, row.actor, row.action, row.target, row.detail]);
    }
  }
  console.log(`${fmt(total)} jobs written by claims and outcomes in ${fillSeconds.toFixed(0)} s`);
  table(['verify', 'entries', 'time', 'entries/s', 'starts judged against a cap', 'violations', 'peak RSS'], rows);
  await store.close();
} finally {
  await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await dataSource.destroy();
  await server.stop?.();
}
