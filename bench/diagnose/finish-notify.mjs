// What the finish hint costs (PostgreSQL): jobs_after_update sends NOTIFY '!' once per statement
// that finishes jobs, so that waitFor wakes in other processes. A serial loop claims --batch jobs
// and writes their outcomes (jobClaim + jobCompleteMany, one store in this process, a wake-up hint
// listener open as a worker's is, so the server signals a listening session on every NOTIFY), with
// the trigger as the build installs it and with the trigger re-created without the NOTIFY (the
// function's own text, that one IF removed), in turns within each round. Prints µs per job of each
// and the difference. On a build without the finish hint it says so and stops.
// Usage: node bench/diagnose/finish-notify.mjs [--batches 1,10,200] [--jobs 3000] [--rounds 4] [--loops 1]
//   --jobs: jobs per batch size, variant and round.
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../dist/lib/index.js';
import { Server } from '../peers/cell.mjs';
import { median, postgres } from '../support.mjs';
import ours from '../systems/ours.mjs';

const { values } = parseArgs({
  options: { batches: { type: 'string', default: '1,10,200' }, jobs: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '4' }, loops: { type: 'string', default: '1' } },
});
// Concurrent claim-and-outcome loops: a transaction that sent NOTIFY takes a cluster-wide lock at
// commit, so concurrent writers are where a hint per statement could cost more than its own time.
const LOOPS = Number(values.loops);
const BATCHES = values.batches.split(',').map(Number);
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const pgServer = await postgres();
const server = new Server(pgServer.url);
const db = await server.database(ours);
const dataSource = await new DataSource({ type: 'postgres', url: db.url, extra: { max: 4 + LOOPS } }).initialize();
const store = new PostgresJobStore({ dataSource });
try {
  const [fn] = await dataSource.query(
    `SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'durable_scheduler' AND p.proname = 'jobs_after_update'`,
  );
  const withHint = fn.def;
  const withoutHint = withHint.replace(/\n\s*IF finished IS NOT NULL THEN\s*PERFORM pg_notify\([^;]*'!'\);\s*END IF;/, '');
  if (withoutHint === withHint) {
    console.log('this build sends no finish hint (no NOTIFY \'!\' in jobs_after_update): nothing to compare');
  } else {
    let hints = 0;
    const subscription = await store.subscribeWakeHints({ listener: () => (hints += 1) });
    const variants = { 'with NOTIFY': withHint, 'without NOTIFY': withoutHint };
    const seen = Object.fromEntries(BATCHES.map((b) => [b, { 'with NOTIFY': [], 'without NOTIFY': [] }]));
    let k = 0;
    for (let round = 0; round < ROUNDS + 1; round++) {
      for (const batch of BATCHES) {
        // Turns alternate which variant goes first; round 0 warms up and is not counted.
        const order = round % 2 ? ['without NOTIFY', 'with NOTIFY'] : ['with NOTIFY', 'without NOTIFY'];
        for (const variant of order) {
          await dataSource.query(variants[variant]);
          for (let i = 0; i < JOBS; i += 1_000) {
            await store.jobEnqueueMany({ jobs: Array.from({ length: Math.min(1_000, JOBS - i) }, () => ({ name: 'noop', payload: { k: k++, pad: 'x'.repeat(80) } })) });
          }
          if (round === 0) await dataSource.query('ANALYZE');
          const t0 = performance.now();
          let done = 0;
          await Promise.all(
            Array.from({ length: LOOPS }, async (_, loop) => {
              for (;;) {
                const leased = await store.jobClaim({ workerId: `w${loop}`, limit: batch, queues: ['default'], leaseMs: 60_000 });
                if (leased.length === 0) return;
                await store.jobCompleteMany({ workerId: `w${loop}`, outcomes: leased.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' })) });
                done += leased.length;
              }
            }),
          );
          if (done !== JOBS) throw new Error(`drained ${done} of ${JOBS}`);
          const usPerJob = ((performance.now() - t0) * 1_000) / JOBS;
          if (round > 0) seen[batch][variant].push(usPerJob);
          console.log(`  round ${round} batch ${batch} ${variant}: ${usPerJob.toFixed(1)} µs/job`);
        }
      }
    }
    await dataSource.query(withHint);
    await subscription.close();
    console.log(`(${hints} hints reached this process's listener)`);
    console.log('');
    console.log('| jobs per claim and outcome write | with NOTIFY µs/job | without NOTIFY µs/job | difference µs/job | with / without |');
    console.log('|---|---|---|---|---|');
    for (const batch of BATCHES) {
      const a = median(seen[batch]['with NOTIFY']);
      const b = median(seen[batch]['without NOTIFY']);
      console.log(`| ${batch} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(a - b).toFixed(1)} | ${(a / b).toFixed(3)} |`);
    }
  }
} finally {
  await dataSource.destroy();
  await db.drop();
  await server.close();
  await pgServer.stop();
}
