// A drain where every job sits behind a capped key: --keys keys, each capped at --cap, --jobs jobs
// spread over them, one worker node at its defaults. Every claim then reads the lanes of parked jobs
// (docs/concurrency-limits.md), and takes at most keys × cap jobs, so the drain's rate is the claim's
// cost. With --analyze the tables are analyzed after the enqueue, while no job is parked yet: the
// statistics a server's autovacuum leaves when a backlog forms after its last analyze. A claim's
// plan must not depend on them: its cost stays flat as the backlog grows. With --groups G the jobs
// are spread over G fair groups instead, with no limit (each group is a lane too, docs/groups.md).
// Usage: node bench/diagnose/capped-keys-drain.mjs [--stores pg,sqlite,mariadb] [--jobs 5000,20000]
//   [--keys 20] [--cap 1] [--groups G] [--analyze] [--dist dist]
// PostgreSQL: DATABASE_URL or an embedded server; MariaDB: MARIADB_URL (default mysql://root@127.0.0.1:3306/test).
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { postgres, schemaName } from '../support.mjs';

const { values } = parseArgs({
  options: {
    stores: { type: 'string', default: 'pg,sqlite,mariadb' },
    jobs: { type: 'string', default: '5000,20000' },
    keys: { type: 'string', default: '20' },
    cap: { type: 'string', default: '1' },
    groups: { type: 'string', default: '0' },
    analyze: { type: 'boolean', default: false },
    dist: { type: 'string', default: 'dist' },
  },
});
const dist = pathToFileURL(resolve(values.dist)).href;
const { MysqlJobStore, PostgresJobStore, SqliteJobStore } = await import(`${dist}/lib/index.js`);
const { FunctionInvoker, WorkerNode } = await import(`${dist}/lib/worker/public-api.js`);
const GROUPS = Number(values.groups);
const KEYS = GROUPS > 0 ? 0 : Number(values.keys);
const spread = (n) => (GROUPS > 0 ? { group: `g${n % GROUPS}` } : { concurrencyKey: `k${n % KEYS}` });

/** A fresh store of `kind`, its `analyze()` and its `drop()`. */
async function open(kind) {
  if (kind === 'pg') {
    const server = await postgres();
    const dataSource = await new DataSource({ type: 'postgres', url: server.url, extra: { max: 10 } }).initialize();
    const schema = schemaName('capped');
    return {
      store: new PostgresJobStore({ dataSource, schema }),
      analyze: () => dataSource.query(`ANALYZE "${schema}".jobs`),
      drop: async () => {
        await dataSource.query(`DROP SCHEMA "${schema}" CASCADE`);
        await dataSource.destroy();
        await server.stop();
      },
    };
  }
  if (kind === 'mariadb') {
    const dataSource = await new DataSource({ type: 'mysql', url: process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test' }).initialize();
    const tablePrefix = `capped_${randomBytes(4).toString('hex')}_`;
    const store = new MysqlJobStore({ dataSource, tablePrefix });
    return {
      store,
      analyze: () => dataSource.query(`ANALYZE TABLE \`${tablePrefix}jobs\``),
      drop: async () => {
        await store.close();
        const rows = await dataSource.query('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?', [`${tablePrefix}%`]);
        if (rows.length > 0) await dataSource.query(`DROP TABLE ${rows.map((r) => `\`${r.t}\``).join(', ')}`);
        await dataSource.destroy();
      },
    };
  }
  const file = join(tmpdir(), `capped-${randomBytes(4).toString('hex')}.db`);
  const dataSource = await new DataSource({ type: 'better-sqlite3', database: file }).initialize();
  return {
    store: new SqliteJobStore({ dataSource }),
    analyze: () => dataSource.query('ANALYZE'),
    drop: async () => {
      await dataSource.destroy();
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    },
  };
}

async function drain(kind, jobs) {
  const { store, analyze, drop } = await open(kind);
  await store.migrate();
  for (let k = 0; k < KEYS; k += 1) await store.concurrencyLimitSet({ target: { key: `k${k}` }, max: Number(values.cap) });
  for (let i = 0; i < jobs; i += 1_000) {
    const count = Math.min(1_000, jobs - i);
    await store.jobEnqueueMany({ jobs: Array.from({ length: count }, (_, j) => ({ name: 'noop', payload: { n: i + j }, ...spread(i + j) })) });
  }
  if (values.analyze) await analyze();
  const claims = { n: 0, ms: 0 };
  for (const name of ['jobClaim', 'jobCompleteAndClaim']) {
    const original = store[name]?.bind(store);
    if (!original) continue;
    store[name] = async (input) => {
      const t = performance.now();
      try {
        return await original(input);
      } finally {
        claims.n += 1;
        claims.ms += performance.now() - t;
      }
    };
  }
  let done = 0;
  let finish;
  const finished = new Promise((r) => (finish = r));
  const invoker = new FunctionInvoker({ noop: { handle: () => { if (++done === jobs) finish(); } } });
  const node = new WorkerNode({ store, invoker, options: { scheduling: false } });
  const t0 = performance.now();
  await node.start();
  await finished;
  const ms = performance.now() - t0;
  await node.stop();
  await drop();
  return { rate: jobs / (ms / 1000), claimMs: claims.ms / claims.n };
}

const cell = GROUPS > 0 ? `${GROUPS} groups` : `${KEYS} keys capped at ${values.cap}`;
console.log(`| store | jobs | ${cell}${values.analyze ? ', analyzed before parking' : ''}: jobs/s | ms per claim |`);
console.log('|---|---|---|---|');
for (const kind of values.stores.split(',')) {
  for (const jobs of values.jobs.split(',').map(Number)) {
    const { rate, claimMs } = await drain(kind, jobs);
    console.log(`| ${kind} | ${jobs} | ${Math.round(rate)} | ${claimMs.toFixed(1)} |`);
  }
}
