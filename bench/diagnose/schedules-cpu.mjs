// What minting costs apart from running the jobs it mints: N interval schedules every E ms on one
// WorkerNode with scheduling on, measured over a window of whole intervals, in two modes:
// `--mode mint` (the node serves a queue nothing is minted into, so occurrences are only minted)
// and `--mode run` (the node also runs them, as the growth bench does). Prints Node and
// PostgreSQL CPU per occurrence and how many minting passes ran.
// Usage: DATABASE_URL=... node bench/diagnose/schedules-cpu.mjs [--lib DIR] [--mode mint|run]
//        [--schedules 10000] [--every-ms 10000] [--warmup 15] [--window 30]
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { loadLibrary } from '../growth/library.mjs';
import { postgresCpuMs } from '../support.mjs';

const { values } = parseArgs({
  options: {
    lib: { type: 'string', default: new URL('../..', import.meta.url).pathname },
    mode: { type: 'string', default: 'mint' },
    schedules: { type: 'string', default: '10000' },
    'every-ms': { type: 'string', default: '10000' },
    warmup: { type: 'string', default: '15' },
    window: { type: 'string', default: '30' },
  },
});
if (!['mint', 'run'].includes(values.mode)) throw new Error(`--mode takes mint or run; got ${values.mode}.`);
const url = process.env.DATABASE_URL;
if (!url) throw new Error('Set DATABASE_URL to a PostgreSQL database this script may write a schema into.');
const everyMs = Number(values['every-ms']);
const schema = `diag_sched_${process.pid}`;
const library = await loadLibrary(values.lib);
const { store, dataSource, close } = await library.open(url, { max: 10, store: { schema } });
try {
  await store.migrate();
  const count = Number(values.schedules);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) {
        next += 1;
        await store.scheduleUpsert({ schedule: { name: 'tick', everyMs } });
      }
    }),
  );
  const options = values.mode === 'mint' ? { queues: ['nothing-minted-here'] } : {};
  const node = new library.WorkerNode({ store, invoker: new library.FunctionInvoker({ tick: { handle: () => {} } }), options });
  await node.start();
  await sleep(Number(values.warmup) * 1_000);
  const [{ now: from }] = await dataSource.query('SELECT now()');
  const c0 = process.cpuUsage();
  const pg0 = postgresCpuMs();
  const passes0 = node.minter?.passes ?? 0;
  await sleep(Math.max(1, Math.round((Number(values.window) * 1_000) / everyMs)) * everyMs);
  const c1 = process.cpuUsage(c0);
  const pg1 = postgresCpuMs();
  const passes = (node.minter?.passes ?? 0) - passes0;
  const [{ now: to }] = await dataSource.query('SELECT now()');
  const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM "${schema}".jobs WHERE created_at >= $1 AND created_at < $2`, [from, to]);
  await node.stop();
  const nodeMs = (c1.user + c1.system) / 1_000 / n;
  const pgMs = pg0 === null ? null : (pg1 - pg0) / n;
  console.log(
    `${library.commit?.slice(0, 7)} mode ${values.mode}: ${n} occurrences in ${passes} passes (${(n / Math.max(1, passes)).toFixed(1)} per pass); ` +
      `Node ${nodeMs.toFixed(3)} ms, PostgreSQL ${pgMs === null ? '–' : pgMs.toFixed(3)} ms per occurrence`,
  );
} finally {
  await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await close();
}
