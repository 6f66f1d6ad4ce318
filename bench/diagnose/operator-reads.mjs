// What an operator's reads cost at a production size: fills a fresh schema with N jobs in one
// INSERT (99 % finished, as retention leaves a busy installation; queue `rare` holds one job in
// 5,000), vacuums and analyzes it, then prints the median of five calls of each read the CLI and a
// dashboard make: a page of 50 jobs, of one state, of a rare queue, the stats and the queue list.
// Usage: node bench/diagnose/operator-reads.mjs [--rows 1000000]
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { median, postgres, schemaName } from '../support.mjs';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' } } });
const ROWS = Number(values.rows);
const pgServer = await postgres();
const dataSource = await new DataSource({ type: 'postgres', url: pgServer.url, extra: { max: 2 } }).initialize();
const schema = schemaName('reads');
const store = new PostgresJobStore({ dataSource, schema });
await store.migrate();
const started = performance.now();
await dataSource.query(`INSERT INTO "${schema}".jobs (id, name, queue, payload, state, run_at, scheduled_for, max_attempts, attempt, finished_at)
  SELECT gen_random_uuid(), 'job.' || (i % 7), CASE WHEN i % 5000 = 0 THEN 'rare' ELSE 'q' || (i % 4) END, '{"order":"A-1001","note":"${'x'.repeat(80)}"}',
    CASE WHEN i % 100 = 0 THEN 'scheduled' WHEN i % 997 = 0 THEN 'dead_lettered' ELSE 'succeeded' END,
    now() - interval '1 hour', now() - interval '1 hour', 3, 1, CASE WHEN i % 100 = 0 THEN NULL ELSE now() END
  FROM generate_series(1, ${ROWS}) i`);
console.log(`${ROWS} jobs written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
await dataSource.query(`VACUUM ANALYZE "${schema}".jobs`);
const reads = {
  'page of 50': () => store.jobList({ limit: 50 }),
  'page of 50, one state (dead_lettered)': () => store.jobList({ state: 'dead_lettered', limit: 50 }),
  'page of 50, queue rare': () => store.jobList({ queue: 'rare', limit: 50 }),
  stats: () => store.jobStats(),
  'queue list': () => store.queueList(),
};
for (const [label, read] of Object.entries(reads)) {
  const ms = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await read();
    ms.push(performance.now() - t);
  }
  console.log(`${label}: ${median(ms).toFixed(1)} ms`);
}
await store.close();
await dataSource.query(`DROP SCHEMA "${schema}" CASCADE`);
await dataSource.destroy();
await pgServer.stop();
