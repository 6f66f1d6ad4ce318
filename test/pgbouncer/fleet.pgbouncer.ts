import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { databaseUrl, dropSchemas, uniqueSchema } from '../support/postgres.js';

// Issue 37 item 3: a fleet of 8 worker processes behind one PgBouncer in transaction mode, polling
// alone. Two are killed with SIGKILL while they hold jobs, and one is stopped (SIGSTOP) while it
// holds jobs until every one of its leases has lapsed and been claimed by another node, then let go
// on (SIGCONT) to report what it ran. A stop can land between an outcome write and its COMMIT; the
// transaction it leaves open holds the job's row, so PgBouncer closes it after 4 s idle. Each handler writes a ledger row inside its attempt's
// transaction, which commits only with the fenced success write: so no job may be missing, and none
// may have two rows. Every step waits for what the database says, never for a length of time.

const WORKER = new URL('../support/pgbouncer-fleet-worker.mjs', import.meta.url).pathname;
const PROCESSES = 8;
const JOBS = 600;
const schema = uniqueSchema('fleet');

let bouncer: PgBouncer;
let admin: DataSource;
const children: ChildProcess[] = [];

beforeAll(async () => {
  // As docs/operations.md advises: a node frozen between its outcome write and its COMMIT holds its
  // job's row lock, and no other node can take the job until that transaction ends.
  bouncer = await startPgBouncer(databaseUrl(), { poolSize: 24, idleTransactionTimeoutS: 4 });
  admin = await new DataSource({ type: 'postgres', url: databaseUrl(), extra: { max: 2 } }).initialize();
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await dropSchemas(admin, [schema]);
  await admin.destroy();
  await bouncer.stop();
});

/**
 * Polls `check` (a read of the database) until it returns true. On timeout the error says what it
 * waited for and how the jobs stood, so a failure in CI shows which step stalled.
 */
async function until(what: string, check: () => Promise<boolean>, capMs = 60_000): Promise<void> {
  const end = Date.now() + capMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`waited ${capMs} ms for ${what}; jobs by state and attempt: ${JSON.stringify(await standing())}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** How the jobs stand: a count per state, attempt and worker. */
async function standing(): Promise<unknown> {
  return admin
    .query(`SELECT state, attempt, worker_id, count(*)::int AS n FROM "${schema}".jobs GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`)
    .catch((error: unknown) => String(error));
}

/** Sends SIGTERM and waits, at most `capMs`, for the node to stop; a node that does not is a failure. */
function stop(child: ChildProcess, capMs = 30_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fleet worker ${child.pid} did not stop within ${capMs} ms of SIGTERM`)), capMs);
    child.once('exit', () => (clearTimeout(timer), resolve()));
    child.kill('SIGTERM');
  });
}

function startWorker(workerId: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [WORKER, bouncer.url, schema, workerId], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes('ready\n')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`fleet worker ${workerId} exited with ${code}: ${err.slice(-2_000)}`)));
  });
}

const count = async (sql: string, values: unknown[] = []) => Number(((await admin.query(sql, values)) as [{ n: string }])[0].n);
const runningOf = (workerId: string) => count(`SELECT count(*) AS n FROM "${schema}".jobs WHERE state = 'running' AND worker_id = $1`, [workerId]);

describe('a fleet behind PgBouncer in transaction mode', () => {
  it(`runs ${JOBS} jobs on ${PROCESSES} processes through SIGKILL of two and a stop past the lease of one: none lost, none applied twice`, async () => {
    const dataSource = await new DataSource({ type: 'postgres', url: bouncer.url, extra: { max: 2 } }).initialize();
    try {
      const store = new PostgresJobStore({ dataSource, schema, poolMode: 'transaction' });
      await store.migrate();
      await admin.query(`CREATE TABLE "${schema}".ledger (job_id uuid NOT NULL, attempt int NOT NULL, worker text NOT NULL)`);
      // Every node is up before the first job exists, so none drains the queue before the others
      // start (on a loaded machine they start seconds apart). About 4 s of work at 32 slots.
      const workers = await Promise.all(Array.from({ length: PROCESSES }, (_, i) => startWorker(`fleet-${i}`)));
      const ids: string[] = [];
      for (let i = 0; i < JOBS; i += 100) {
        const jobs = Array.from({ length: 100 }, (_, k) => ({ name: 'fleet.job', payload: { ms: 100 + ((i + k) % 5) * 50 }, maxAttempts: 10 }));
        ids.push(...(await store.jobEnqueueMany({ jobs })).map((r) => r.id));
      }

      // Two nodes die holding jobs: their leases lapse and other nodes claim the jobs again.
      for (const victim of ['fleet-0', 'fleet-1']) {
        await until(`${victim} to hold jobs`, async () => (await runningOf(victim)) > 0);
        workers[Number(victim.slice(-1))]!.kill('SIGKILL');
      }
      // One stalls holding jobs until each of them is leased to another node, then wakes: what it
      // reports then is refused by the fence, and its ledger rows roll back with its writes.
      const stalled = workers[2]!;
      let held: string[] = [];
      while (held.length === 0) {
        await until('fleet-2 to hold jobs', async () => (await runningOf('fleet-2')) > 0);
        stalled.kill('SIGSTOP');
        held = ((await admin.query(`SELECT id FROM "${schema}".jobs WHERE state = 'running' AND worker_id = 'fleet-2'`)) as { id: string }[]).map((h) => h.id);
        if (held.length === 0) stalled.kill('SIGCONT');
      }
      await until("fleet-2's jobs to be leased to other nodes", async () =>
        (await count(`SELECT count(*) AS n FROM "${schema}".jobs WHERE id = ANY($1::uuid[]) AND state = 'running' AND worker_id = 'fleet-2'`, [held])) === 0,
      );
      stalled.kill('SIGCONT');

      await until('every job to succeed', async () => (await count(`SELECT count(*) AS n FROM "${schema}".jobs WHERE state = 'succeeded'`)) === JOBS, 120_000);
      // Every node stops gracefully first, so each attempt transaction has committed or rolled back.
      await Promise.all(workers.map((child) => stop(child)));

      expect(await count(`SELECT count(*) AS n FROM "${schema}".jobs WHERE state <> 'succeeded'`)).toBe(0);
      expect(await count(`SELECT count(*) AS n FROM "${schema}".ledger`)).toBe(JOBS);
      expect(await count(`SELECT count(DISTINCT job_id) AS n FROM "${schema}".ledger`)).toBe(JOBS);
      // Each job's one ledger row is from the attempt and worker that held its live lease at the end.
      expect(await count(`SELECT count(*) AS n FROM "${schema}".ledger l JOIN "${schema}".jobs j ON j.id = l.job_id WHERE l.attempt = j.attempt AND l.worker = j.worker_id`)).toBe(JOBS);
      // The faults were real: what the stalled node held was claimed again by others.
      expect(await count(`SELECT count(*) AS n FROM "${schema}".jobs WHERE id = ANY($1::uuid[]) AND attempt > 1`, [held])).toBeGreaterThan(0);
      expect(ids).toHaveLength(JOBS);
    } finally {
      // A node still stopped, or still draining, must not keep the file waiting: go on, then kill.
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGCONT');
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await dataSource.destroy();
    }
    // Eight Node processes starting beside the rest of CI's runs on two cores, and two lapsed
    // leases: the steps' own caps (4 x 60 s, 120 s, 30 s) end it first, each saying which step.
  }, 420_000);
});
