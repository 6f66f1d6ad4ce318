import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { chaosTablesSql, leaseAuditSql, runChecks, SAFETY, type SafetyCounts, type Sql } from '../../chaos/checks.js';
import { PostgresJobStore } from '../../lib/index.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

/**
 * The chaos run's checker, proved on hand-built histories: a clean one counts nothing, and each
 * anomaly class, planted alone, is counted by its own check and by no other. Histories are made
 * through the real store (enqueue, claim, fenced outcome) plus direct writes where only a broken
 * scheduler could have produced the row. Instants come from the database, so nothing waits.
 */
describe('chaos checks', () => {
  let dataSource: DataSource;
  const schemas: string[] = [];
  let w: World;

  beforeAll(async () => {
    dataSource = await openPostgresDataSource(4);
  });

  afterAll(async () => {
    await dropSchemas(dataSource, schemas);
    await dataSource.destroy();
  });

  beforeEach(async () => {
    w = await World.create(dataSource, schemas);
    await w.cleanHistory();
  });

  const only = (key: keyof SafetyCounts, n = 1): SafetyCounts =>
    Object.fromEntries(SAFETY.map(([k]) => [k, k === key ? n : 0])) as SafetyCounts;

  it('counts nothing in a clean history, and observes what it exercised', async () => {
    const { safety, observed } = await w.check();
    expect(safety).toEqual(only('lost', 0));
    expect(observed).toMatchObject({ jobs: 8, executions: 10, reExecutions: 2, staleRejected: 1, maxPerKey: 2 });
  });

  it('lost: a committed enqueue that never finished', async () => {
    await w.enqueue('plain', 'succeeded');
    expect((await w.check()).safety).toEqual(only('lost'));
  });

  it('phantom: a job whose enqueue was not recorded as committed', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    await w.run(id, 'w1', 'succeeded');
    await dataSource.query(`DELETE FROM "${w.chaos}".enqueued WHERE job_id = $1`, [id]);
    expect((await w.check()).safety).toEqual(only('phantom'));
  });

  it('unexpected terminal state: a plain job dead-lettered', async () => {
    const id = await w.enqueue('plain', 'succeeded', { maxAttempts: 1 });
    await w.run(id, 'w1', 'failed');
    expect((await w.check()).safety).toEqual(only('unexpectedState'));
  });

  it('unexpected terminal state: a last-chance job may be dead-lettered by a fault, never by its own failure', async () => {
    const byFault = await w.enqueue('last-chance', 'succeeded', { maxAttempts: 1 });
    await w.run(byFault, 'w1', 'failed', { error: 'QueryFailedError: Connection terminated unexpectedly' });
    expect((await w.check()).safety).toEqual(only('lost', 0));
    const byItself = await w.enqueue('last-chance', 'succeeded', { maxAttempts: 1 });
    await w.run(byItself, 'w1', 'failed', { error: 'Error: chaos: chaos.failing fails attempt 1' });
    expect((await w.check()).safety).toEqual(only('unexpectedState'));
  });

  it('outcome applied twice: a second terminal transition in the history', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    await w.run(id, 'w1', 'succeeded');
    await dataSource.query(`INSERT INTO "${w.scheduler}".job_history (job_id, name, state, attempt) VALUES ($1, 'chaos.plain', 'succeeded', 1)`, [id]);
    expect((await w.check()).safety).toEqual(only('appliedTwice'));
  });

  it('effects applied twice: two attempt-EntityManager rows for one job', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    await w.run(id, 'w1', 'succeeded');
    await dataSource.query(`INSERT INTO "${w.chaos}".effects (job_id, attempt, worker_id) VALUES ($1, 1, 'w1')`, [id]);
    expect((await w.check()).safety).toEqual(only('effectsTwice'));
  });

  it('stale outcome accepted: a success written after its lease lapsed (seen by the lease audit)', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    const attempt = await w.claim(id, 'w1');
    await w.execution(id, attempt, 'w1');
    await dataSource.query(`INSERT INTO "${w.chaos}".effects (job_id, attempt, worker_id) VALUES ($1, 1, 'w1')`, [id]);
    // What an unfenced (or wrongly fenced) write would do: the lease is already in the past.
    await dataSource.query(`UPDATE "${w.scheduler}".jobs SET leased_until = clock_timestamp() - interval '1 second' WHERE id = $1`, [id]);
    await dataSource.query(`UPDATE "${w.scheduler}".jobs SET state = 'succeeded', leased_until = NULL, finished_at = now() WHERE id = $1`, [id]);
    expect((await w.check()).safety).toEqual(only('staleAccepted'));
  });

  it('stale outcome accepted: the final success names a worker that never ran that attempt', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    await w.run(id, 'w1', 'succeeded');
    await dataSource.query(`UPDATE "${w.chaos}".executions SET worker_id = 'w2' WHERE job_id = $1`, [id]);
    await dataSource.query(`UPDATE "${w.chaos}".effects SET worker_id = 'w2' WHERE job_id = $1`, [id]);
    // The effects row now disagrees with the job's lease as well, which is the same anomaly seen twice.
    expect((await w.check()).safety).toEqual({ ...only('staleAccepted'), staleRows: 1 });
  });

  it('stale outcome accepted: an outcome applied after the worker sat paused past its lease', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    const [{ t }] = await dataSource.query(`SELECT extract(epoch FROM clock_timestamp()) * 1000 AS t`);
    await w.run(id, 'w1', 'succeeded', { startedAt: Number(t) - 10_000, endedAt: Number(t) });
    await dataSource.query(`INSERT INTO "${w.chaos}".pauses VALUES ('w1', to_timestamp($1 / 1000.0), to_timestamp($2 / 1000.0))`, [Number(t) - 8_000, Number(t) - 2_000]);
    expect((await w.check()).safety).toEqual(only('staleAccepted'));
  });

  it('stale outcome accepted: an older attempt\'s outcome landed after a newer attempt\'s claim', async () => {
    const id = await w.enqueue('failing', 'succeeded');
    await w.run(id, 'w1', 'failed');
    const attempt = await w.claim(id, 'w2');
    await dataSource.query(`INSERT INTO "${w.scheduler}".job_history (job_id, name, state, attempt) VALUES ($1, 'chaos.failing', 'scheduled', 1)`, [id]);
    await w.finish(id, attempt, 'w2', 'succeeded');
    expect((await w.check()).safety).toEqual(only('staleAccepted'));
  });

  it('stale outcome accepted: a report the worker was told was stale is the job\'s final success', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    await w.run(id, 'w1', 'succeeded');
    await dataSource.query(`UPDATE "${w.chaos}".settled SET status = 'stale' WHERE job_id = $1`, [id]);
    expect((await w.check()).safety).toEqual(only('staleAccepted'));
  });

  it('rows from a stale attempt: a failed attempt\'s write committed', async () => {
    const id = await w.enqueue('failing', 'succeeded');
    await w.run(id, 'w1', 'failed');
    await w.run(id, 'w2', 'succeeded');
    await dataSource.query(`INSERT INTO "${w.chaos}".effects (job_id, attempt, worker_id) VALUES ($1, 1, 'w1')`, [id]);
    // One job, two rows: also the rows-applied-twice count.
    expect((await w.check()).safety).toEqual({ ...only('staleRows'), effectsTwice: 1 });
  });

  it('one attempt leased twice: two workers ran the same attempt', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    await w.run(id, 'w1', 'succeeded');
    await w.execution(id, 1, 'w2');
    expect((await w.check()).safety).toEqual(only('attemptLeasedTwice'));
  });

  it('limit exceeded: three applied executions of a key with limit 2 overlap', async () => {
    const [{ t }] = await dataSource.query(`SELECT extract(epoch FROM clock_timestamp()) * 1000 AS t`);
    for (const worker of ['w1', 'w2', 'w3']) {
      const id = await w.enqueue('limited', 'succeeded', { concurrencyKey: 'tenant:y', concurrencyLimit: 2 });
      await w.run(id, worker, 'succeeded', { key: 'tenant:y', startedAt: Number(t) - 3_000, endedAt: Number(t) - 1_000 });
    }
    expect((await w.check()).safety).toEqual(only('limitViolations'));
  });

  it('poison wrong: a poison job dead-lettered before its last attempt', async () => {
    const id = await w.enqueue('poison', 'dead_lettered', { maxAttempts: 3 });
    await w.run(id, 'w1', 'dead_lettered');
    expect((await w.check()).safety).toEqual(only('poisonWrong'));
  });

  it('dependant early: a dependant that ran before its parent finished', async () => {
    const parent = await w.enqueue('graph', 'succeeded');
    const child = await w.enqueue('graph', 'succeeded', { dependsOn: [parent] });
    const [{ t }] = await dataSource.query(`SELECT extract(epoch FROM clock_timestamp()) * 1000 AS t`);
    await w.run(parent, 'w1', 'succeeded');
    await w.run(child, 'w1', 'succeeded');
    await dataSource.query(`UPDATE "${w.chaos}".executions SET started_at = to_timestamp($2 / 1000.0) WHERE job_id = $1`, [child, Number(t) - 1_000]);
    expect((await w.check()).safety).toEqual(only('dependantsEarly'));
  });
});

type Kind = 'succeeded' | 'failed' | 'dead_lettered';

/** A scheduler schema and a chaos schema, with helpers that write what a chaos run would. */
class World {
  private constructor(
    private readonly dataSource: DataSource,
    readonly store: PostgresJobStore,
    readonly chaos: string,
    readonly scheduler: string,
  ) {}

  static async create(dataSource: DataSource, schemas: string[]): Promise<World> {
    const chaos = uniqueSchema('chaos');
    const scheduler = uniqueSchema('chaos_sched');
    schemas.push(chaos, scheduler);
    const store = new PostgresJobStore({ dataSource, schema: scheduler });
    await store.migrate();
    await dataSource.query(chaosTablesSql(chaos));
    await dataSource.query(leaseAuditSql({ chaos, scheduler }));
    return new World(dataSource, store, chaos, scheduler);
  }

  check() {
    const sql: Sql = (text, params) => this.dataSource.query(text, params as unknown[]);
    return runChecks(sql, { chaos: this.chaos, scheduler: this.scheduler }, 2_500);
  }

  async enqueue(
    kind: string,
    expected: string,
    options: { maxAttempts?: number; dependsOn?: string[]; concurrencyKey?: string; concurrencyLimit?: number } = {},
  ): Promise<string> {
    const id = randomUUID();
    await this.store.jobEnqueue({ job: { id, name: `chaos.${kind}`, payload: {}, maxAttempts: options.maxAttempts ?? 5, ...options } });
    await this.dataSource.query(
      `INSERT INTO "${this.chaos}".enqueued (job_id, name, kind, expected, producer, parents, mode) VALUES ($1, $2, $3, $4, 'p1', $5::uuid[], $6)`,
      [id, `chaos.${kind}`, kind, expected, options.dependsOn ?? [], options.dependsOn ? 'on_success' : null],
    );
    return id;
  }

  /** Claims exactly this job (it must be the only due one) and returns its attempt. */
  async claim(id: string, worker: string): Promise<number> {
    const [job] = await this.store.jobClaim({ workerId: worker, limit: 1, queues: ['default'], leaseMs: 60_000 });
    if (job?.id !== id) throw new Error(`expected to claim ${id}, claimed ${job?.id}`);
    return job.attempt;
  }

  async execution(id: string, attempt: number, worker: string, o: { key?: string; startedAt?: number; endedAt?: number } = {}): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO "${this.chaos}".executions (worker_id, job_id, attempt, name, key, started_at, ended_at, threw)
       VALUES ($1, $2, $3, 'chaos', $4, coalesce(to_timestamp($5 / 1000.0), clock_timestamp()), coalesce(to_timestamp($6 / 1000.0), clock_timestamp()), false)`,
      [worker, id, attempt, o.key ?? null, o.startedAt ?? null, o.endedAt ?? null],
    );
  }

  /** One attempt as a worker runs it: claim, log the execution, write the effect on success, report through the fence. */
  async run(id: string, worker: string, kind: Kind, o: { key?: string; startedAt?: number; endedAt?: number; error?: string } = {}): Promise<void> {
    await this.finish(id, await this.claim(id, worker), worker, kind, o);
  }

  /** The rest of an attempt after its claim. */
  async finish(id: string, attempt: number, worker: string, kind: Kind, o: { key?: string; startedAt?: number; endedAt?: number; error?: string } = {}): Promise<void> {
    await this.execution(id, attempt, worker, o);
    if (kind === 'succeeded') {
      await this.dataSource.query(`INSERT INTO "${this.chaos}".effects (job_id, attempt, worker_id) VALUES ($1, $2, $3)`, [id, attempt, worker]);
    }
    const outcome =
      kind === 'succeeded'
        ? { jobId: id, attempt, kind }
        : kind === 'failed'
          ? { jobId: id, attempt, kind, error: o.error ?? 'boom', retryDelayMs: 0 }
          : { jobId: id, attempt, kind, error: o.error ?? 'boom' };
    const [result] = await this.store.jobCompleteMany({ workerId: worker, outcomes: [outcome] });
    await this.dataSource.query(
      `INSERT INTO "${this.chaos}".settled (worker_id, job_id, attempt, kind, status, state, at) VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp())`,
      [worker, id, attempt, kind, result!.status, result!.status === 'applied' ? result!.state : null],
    );
  }

  /**
   * One of each kind, run as a healthy cluster would: a plain success, a failure then a success,
   * poison through all its attempts, two limited jobs side by side, a parent before its child, and
   * a stale report refused by the fence (its job later succeeds under another worker).
   */
  async cleanHistory(): Promise<void> {
    await this.run(await this.enqueue('plain', 'succeeded'), 'w1', 'succeeded');
    const failing = await this.enqueue('failing', 'succeeded');
    await this.run(failing, 'w1', 'failed');
    await this.run(failing, 'w2', 'succeeded');
    const poison = await this.enqueue('poison', 'dead_lettered', { maxAttempts: 2 });
    await this.run(poison, 'w1', 'failed');
    await this.run(poison, 'w2', 'failed');
    const [{ t }] = await this.dataSource.query(`SELECT extract(epoch FROM clock_timestamp()) * 1000 AS t`);
    for (const worker of ['w1', 'w2']) {
      const id = await this.enqueue('limited', 'succeeded', { concurrencyKey: 'tenant:x', concurrencyLimit: 2 });
      await this.run(id, worker, 'succeeded', { key: 'tenant:x', startedAt: Number(t) - 3_000, endedAt: Number(t) - 1_000 });
    }
    const parent = await this.enqueue('graph', 'succeeded');
    const child = await this.enqueue('graph', 'succeeded', { dependsOn: [parent] });
    await this.run(parent, 'w1', 'succeeded');
    await this.run(child, 'w2', 'succeeded');
    // w3 reports on a lease it no longer holds: refused, and counted as observed, not as an anomaly.
    const late = await this.enqueue('plain', 'succeeded');
    await this.run(late, 'w1', 'succeeded');
    const [result] = await this.store.jobCompleteMany({ workerId: 'w3', outcomes: [{ jobId: late, attempt: 1, kind: 'succeeded' }] });
    await this.dataSource.query(
      `INSERT INTO "${this.chaos}".settled (worker_id, job_id, attempt, kind, status, at) VALUES ('w3', $1, 1, 'succeeded', $2, clock_timestamp())`,
      [late, result!.status],
    );
  }
}
