// A/B of the MySQL store's attempt transaction: a drain whose handler writes one row through the
// attempt's EntityManager (so its success write commits with it), each library's dist/ in turn,
// rounds interleaved. Ratios of head to the other library are the result.
//
//   node bench/diagnose/mysql-attempt-drain.mjs --libs /work/main,/work/parent [--jobs 5000] [--rounds 3] [--concurrency 10,50]
//
// MariaDB: MARIADB_URL (default mysql://root@127.0.0.1:3306/test); tables under a prefix of their own, dropped after.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';

const { values: args } = parseArgs({
  options: {
    libs: { type: 'string' },
    jobs: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '10,50' },
  },
});
const LIBS = (args.libs ?? new URL('../..', import.meta.url).pathname).split(',');
const JOBS = Number(args.jobs);
const URL_ = process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';
const silent = { log() {}, warn() {}, error() {} };

async function load(root) {
  const lib = await import(pathToFileURL(join(root, 'dist/lib/index.js')).href);
  const worker = await import(pathToFileURL(join(root, 'dist/lib/worker/public-api.js')).href);
  return { MysqlJobStore: lib.MysqlJobStore, FunctionInvoker: worker.FunctionInvoker, WorkerNode: worker.WorkerNode };
}

async function drain(lib, concurrency) {
  const prefix = `atx_${randomBytes(4).toString('hex')}_`;
  const dataSource = await new DataSource({ type: 'mariadb', url: URL_, poolSize: concurrency + 4 }).initialize();
  const make = () => new lib.MysqlJobStore({ dataSource, tablePrefix: prefix, poolSize: 8 });
  const scratch = `\`${prefix}rows\``;
  try {
    const producer = make();
    await producer.migrate();
    await dataSource.query(`CREATE TABLE ${scratch} (id INT PRIMARY KEY) ENGINE = InnoDB`);
    for (let i = 0; i < JOBS; i += 1_000) {
      await producer.jobEnqueueMany({ jobs: Array.from({ length: Math.min(1_000, JOBS - i) }, (_, k) => ({ name: 'tx', payload: { k: i + k } })) });
    }
    await producer.close();
    const store = make();
    let done = 0;
    let finished;
    const all = new Promise((resolve) => (finished = resolve));
    const invoker = new lib.FunctionInvoker({
      tx: {
        transaction: true,
        handle: async (payload, ctx) => {
          await ctx.entityManager().query(`INSERT INTO ${scratch} (id) VALUES (?)`, [payload.k]);
          if (++done === JOBS) finished();
        },
      },
    });
    const t0 = performance.now();
    const node = new lib.WorkerNode({ store, invoker, logger: silent, options: { scheduling: false, shutdownGraceMs: 1_000, concurrency } });
    await node.start();
    await all;
    const seconds = (performance.now() - t0) / 1_000;
    await node.stop();
    await store.close();
    const [{ n }] = await dataSource.query(`SELECT COUNT(*) AS n FROM ${scratch}`);
    if (Number(n) !== JOBS) throw new Error(`${n} rows for ${JOBS} jobs`);
    return Math.round(JOBS / seconds);
  } finally {
    const rows = await dataSource.query(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?`, [`${prefix}%`]);
    if (rows.length > 0) await dataSource.query(`DROP TABLE ${rows.map((r) => `\`${r.t}\``).join(', ')}`);
    await dataSource.destroy();
  }
}

const libs = await Promise.all(LIBS.map(async (root) => ({ root, lib: await load(root) })));
const results = {};
for (let round = 1; round <= Number(args.rounds); round += 1) {
  for (const concurrency of args.concurrency.split(',').map(Number)) {
    for (const { root, lib } of round % 2 ? libs : [...libs].reverse()) {
      const rate = await drain(lib, concurrency);
      (results[`${root} c${concurrency}`] ??= []).push(rate);
      console.log(`round ${round} ${root} concurrency ${concurrency}: ${rate} jobs/s`);
    }
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const concurrency of args.concurrency.split(',').map(Number)) {
  const [head, ...others] = LIBS.map((root) => median(results[`${root} c${concurrency}`]));
  console.log(`concurrency ${concurrency}: medians ${LIBS.map((root, i) => `${root} ${[head, ...others][i]}`).join(', ')}${others.length ? `; head/other ${(head / others[0]).toFixed(2)}` : ''}`);
}
