// What `verifyHistory` (docs/verify.md) costs on PostgreSQL as the history grows: a fresh schema per
// size, filled in SQL with finished jobs of three entries each (scheduled and running written here,
// succeeded by the store's own insert trigger, after them, given the lease it ended), then
// one verify over it. Reported: entries checked per second, and the process's peak resident memory
// while it ran (flat as the history grows is the promise).
// Usage: node bench/verify.bench.mjs [--entries 1000000,10000000]
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { PostgresJobStore, verifyHistory } from '../dist/lib/index.js';
import { openDataSource, postgres, schemaName } from './support.mjs';

const { values } = parseArgs({ options: { entries: { type: 'string', default: '1000000,10000000' } } });
const server = await postgres();

for (const entries of values.entries.split(',').map(Number)) {
  const jobs = Math.ceil(entries / 3);
  const schema = schemaName('verify');
  const dataSource = await openDataSource(server.url, 4);
  try {
    const store = new PostgresJobStore({ dataSource, schema });
    await store.migrate();
    const { jobs: jobsTable, history } = store.naming;
    const filled = performance.now();
    // In slices of a million jobs, so no one statement holds the whole fill.
    for (let from = 0; from < jobs; from += 1_000_000) {
      const to = Math.min(jobs, from + 1_000_000);
      await dataSource.query(`
        WITH made AS (
          INSERT INTO ${jobsTable} (id, name, queue, payload, state, run_at, scheduled_for, attempt, max_attempts, finished_at)
          SELECT gen_random_uuid(), 'work', 'default', '{}', 'succeeded', now(), now(), 1, 3, now() FROM generate_series(${from + 1}, ${to})
          RETURNING id)
        INSERT INTO ${history} (job_id, name, at, state, attempt, worker_id)
        SELECT m.id, 'work', now(), s.state, s.attempt, s.worker FROM made m, (VALUES ('scheduled', 0, 1, NULL), ('running', 1, 2, 'bench-worker')) s(state, attempt, n, worker)
        ORDER BY m.id, s.n`);
      // The insert trigger wrote each job's success; give it the lease it ended, as an outcome's entry has.
      await dataSource.query(`UPDATE ${history} SET worker_id = 'bench-worker', lease_until = at + interval '1 minute' WHERE state = 'succeeded' AND worker_id IS NULL`);
    }
    await dataSource.query(`VACUUM ANALYZE ${history}`);
    await dataSource.query(`VACUUM ANALYZE ${jobsTable}`);
    const fillSeconds = (performance.now() - filled) / 1000;
    let peak = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
    const before = process.memoryUsage().rss;
    const started = performance.now();
    const report = await verifyHistory(store);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    console.log(
      `${report.checked.entries} entries of ${report.checked.jobs} jobs (filled in ${fillSeconds.toFixed(0)} s): verified in ${seconds.toFixed(1)} s, ` +
        `${Math.round(report.checked.entries / seconds)} entries/s, ${report.checked.leases} leases judged, ${report.violationCount} violations; RSS ${Math.round(before / 2 ** 20)} MiB before, ${Math.round(peak / 2 ** 20)} MiB at most`,
    );
    await store.close();
  } finally {
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await dataSource.destroy();
  }
}
await server.stop?.();
