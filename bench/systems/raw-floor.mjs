// The floor: the least a fenced SQL queue can do per job. Four loops each claim up to 100 due jobs
// with FOR UPDATE SKIP LOCKED, run them, and mark them succeeded in one UPDATE fenced on worker and
// attempt. LISTEN/NOTIFY wakes idle loops. No retries, leases, history or maintenance.
import pg from 'pg';

const LOOPS = 4;
const CLAIM = 100;
const SCHEMA = `CREATE TABLE raw_jobs (id bigserial PRIMARY KEY, state text NOT NULL DEFAULT 'scheduled', run_at timestamptz NOT NULL DEFAULT now(),
  payload jsonb NOT NULL, worker text, attempt int NOT NULL DEFAULT 0);
  CREATE INDEX raw_jobs_due ON raw_jobs (run_at, id) WHERE state = 'scheduled'`;
const INSERT = `WITH ins AS (INSERT INTO raw_jobs (payload, run_at) SELECT p, coalesce($2, now()) FROM unnest($1::jsonb[]) AS p RETURNING 1)
  SELECT pg_notify('raw_jobs', '') FROM (SELECT 1 FROM ins LIMIT 1) one`;
const CLAIM_SQL = `UPDATE raw_jobs SET state = 'running', worker = $1, attempt = attempt + 1
  WHERE id IN (SELECT id FROM raw_jobs WHERE state = 'scheduled' AND run_at <= now() ORDER BY run_at, id FOR UPDATE SKIP LOCKED LIMIT $2)
  RETURNING id, attempt, payload`;
const COMPLETE = `UPDATE raw_jobs j SET state = 'succeeded' FROM unnest($2::bigint[], $3::int[]) AS d(id, attempt)
  WHERE j.id = d.id AND j.attempt = d.attempt AND j.worker = $1 AND j.state = 'running'`;

export default {
  name: 'raw floor',
  batchLimit: 10_000,
  remainingSql: `SELECT count(*)::int AS n FROM raw_jobs WHERE state <> 'succeeded' AND run_at < now() + interval '1 day'`,
  async install(url) {
    const client = new pg.Client(url);
    await client.connect();
    await client.query(SCHEMA);
    await client.end();
  },
  async producer(url, max = 10) {
    const pool = new pg.Pool({ connectionString: url, max }).on('error', () => {});
    const addMany = (payloads, opts = {}) => pool.query(INSERT, [payloads.map((p) => JSON.stringify(p)), opts.runAt ?? null]);
    return { add: (p, opts) => addMany([p], opts), addMany, close: () => pool.end() };
  },
  async worker(url, _settings, handler, max = 10) {
    const pool = new pg.Pool({ connectionString: url, max }).on('error', () => {});
    const listener = new pg.Client(url).on('error', () => {});
    await listener.connect();
    const waiters = new Set();
    const wake = () => {
      for (const w of waiters) w();
      waiters.clear();
    };
    listener.on('notification', wake);
    await listener.query('LISTEN raw_jobs');
    let running = true;
    const loop = async (i) => {
      const worker = `${process.pid}-${i}`;
      while (running) {
        const { rows } = await pool.query(CLAIM_SQL, [worker, CLAIM]);
        if (rows.length === 0) {
          await new Promise((resolve) => {
            const done = () => (clearTimeout(timer), waiters.delete(done), resolve());
            const timer = setTimeout(done, 1_000);
            waiters.add(done);
          });
          continue;
        }
        await Promise.all(rows.map((r) => handler(r.payload, r.attempt)));
        await pool.query(COMPLETE, [worker, rows.map((r) => r.id), rows.map((r) => r.attempt)]);
      }
    };
    const loops = Array.from({ length: LOOPS }, (_, i) => loop(i));
    return {
      stop: async () => {
        running = false;
        wake();
        await Promise.allSettled(loops);
        await listener.end();
        await pool.end();
      },
    };
  },
};
