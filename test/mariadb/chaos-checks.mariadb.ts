import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { chaosTablesSql, leaseAuditSql, MARIADB_DIALECT, runChecks, SAFETY, type SafetyCounts, type Sql } from '../../chaos/checks.js';
import { MysqlJobStore } from '../../lib/index.js';
import { openMariadbDataSource } from '../support/mariadb.js';

/**
 * The chaos run's checker in its MariaDB dialect (`npm run chaos -- --store mariadb`), proved on
 * hand-built histories as test/chaos/checks.postgres.spec.ts proves the PostgreSQL one: a clean
 * history counts nothing, and each anomaly class, planted alone, is counted by its own check and
 * by no other. Histories are made through the real MySQL store plus direct writes where only a
 * broken scheduler could have produced the row.
 */
describe('chaos checks (MariaDB)', () => {
  let dataSource: DataSource;
  const databases: string[] = [];
  let w: World;

  beforeAll(async () => {
    dataSource = await openMariadbDataSource({ poolSize: 4 });
  });

  afterAll(async () => {
    for (const database of databases) await dataSource.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await dataSource.destroy();
  });

  beforeEach(async () => {
    w = await World.create(dataSource, databases);
    await w.cleanHistory();
  });

  afterEach(async () => {
    await w.store.close();
  });

  const only = (key: keyof SafetyCounts, n = 1): SafetyCounts => Object.fromEntries(SAFETY.map(([k]) => [k, k === key ? n : 0])) as SafetyCounts;

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
    await dataSource.query(`DELETE FROM ${w.c}.enqueued WHERE job_id = ?`, [id]);
    expect((await w.check()).safety).toEqual(only('phantom'));
  });

  it('unexpected terminal state: a plain job dead-lettered', async () => {
    const id = await w.enqueue('plain', 'succeeded', { maxAttempts: 1 });
    await w.run(id, 'w1', 'failed');
    expect((await w.check()).safety).toEqual(only('unexpectedState'));
  });

  it('unexpected terminal state: a last-chance job may be dead-lettered by a fault, never by its own failure', async () => {
    const byFault = await w.enqueue('last-chance', 'succeeded', { maxAttempts: 1 });
    await w.run(byFault, 'w1', 'failed', { error: 'QueryFailedError: Connection was killed' });
    expect((await w.check()).safety).toEqual(only('lost', 0));
    const byItself = await w.enqueue('last-chance', 'succeeded', { maxAttempts: 1 });
    await w.run(byItself, 'w1', 'failed', { error: 'Error: chaos: chaos.failing fails attempt 1' });
    expect((await w.check()).safety).toEqual(only('unexpectedState'));
  });

  it('outcome applied twice: a second terminal transition in the history', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    await w.run(id, 'w1', 'succeeded');
    await dataSource.query(`INSERT INTO ${w.table('job_history')} (job_id, name, at, state, attempt) VALUES (?, 'chaos.plain', UTC_TIMESTAMP(3), 'succeeded', 1)`, [id]);
    expect((await w.check()).safety).toEqual(only('appliedTwice'));
  });

  it('effects applied twice: two attempt-EntityManager rows for one job', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    await w.run(id, 'w1', 'succeeded');
    await dataSource.query(`INSERT INTO ${w.c}.effects (job_id, attempt, worker_id) VALUES (?, 1, 'w1')`, [id]);
    expect((await w.check()).safety).toEqual(only('effectsTwice'));
  });

  it('stale outcome accepted: a success written after its lease lapsed (seen by the lease audit)', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    const attempt = await w.claim(id, 'w1');
    await w.execution(id, attempt, 'w1');
    await dataSource.query(`INSERT INTO ${w.c}.effects (job_id, attempt, worker_id) VALUES (?, 1, 'w1')`, [id]);
    // What an unfenced (or wrongly fenced) write would do: the lease is already in the past.
    await dataSource.query(`UPDATE ${w.table('jobs')} SET leased_until = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE id = ?`, [id]);
    await dataSource.query(`UPDATE ${w.table('jobs')} SET state = 'succeeded', leased_until = NULL, finished_at = UTC_TIMESTAMP(3) WHERE id = ?`, [id]);
    expect((await w.check()).safety).toEqual(only('staleAccepted'));
  });

  it('stale outcome accepted: the final success names a worker that never ran that attempt', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    await w.run(id, 'w1', 'succeeded');
    await dataSource.query(`UPDATE ${w.c}.executions SET worker_id = 'w2' WHERE job_id = ?`, [id]);
    await dataSource.query(`UPDATE ${w.c}.effects SET worker_id = 'w2' WHERE job_id = ?`, [id]);
    // The effects row now disagrees with the job's lease as well, which is the same anomaly seen twice.
    expect((await w.check()).safety).toEqual({ ...only('staleAccepted'), staleRows: 1 });
  });

  it('stale outcome accepted: an outcome applied after the worker sat paused past its lease', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    const t = await w.now();
    await w.run(id, 'w1', 'succeeded', { startedAt: t - 10_000, endedAt: t });
    await dataSource.query(`INSERT INTO ${w.c}.pauses VALUES ('w1', ?, ?)`, [utc(t - 8_000), utc(t - 2_000)]);
    expect((await w.check()).safety).toEqual(only('staleAccepted'));
  });

  it('stale outcome accepted: a pause no longer than a lease (plus 1 s) is not one', async () => {
    const id = await w.enqueue('plain', 'succeeded');
    const t = await w.now();
    await w.run(id, 'w1', 'succeeded', { startedAt: t - 10_000, endedAt: t });
    await dataSource.query(`INSERT INTO ${w.c}.pauses VALUES ('w1', ?, ?)`, [utc(t - 8_000), utc(t - 8_000 + 3_500)]);
    expect((await w.check()).safety).toEqual(only('lost', 0));
  });

  it("stale outcome accepted: an older attempt's outcome landed after a newer attempt's claim", async () => {
    const id = await w.enqueue('failing', 'succeeded');
    await w.run(id, 'w1', 'failed');
    const attempt = await w.claim(id, 'w2');
    await dataSource.query(`INSERT INTO ${w.table('job_history')} (job_id, name, at, state, attempt) VALUES (?, 'chaos.failing', UTC_TIMESTAMP(3), 'scheduled', 1)`, [id]);
    await w.finish(id, attempt, 'w2', 'succeeded');
    expect((await w.check()).safety).toEqual(only('staleAccepted'));
  });

  it("stale outcome accepted: a report the worker was told was stale is the job's final success", async () => {
    const id = await w.enqueue('plain', 'succeeded');
    await w.run(id, 'w1', 'succeeded');
    await dataSource.query(`UPDATE ${w.c}.settled SET status = 'stale' WHERE job_id = ?`, [id]);
    expect((await w.check()).safety).toEqual(only('staleAccepted'));
  });

  it("rows from a stale attempt: a failed attempt's write committed", async () => {
    const id = await w.enqueue('failing', 'succeeded');
    await w.run(id, 'w1', 'failed');
    await w.run(id, 'w2', 'succeeded');
    await dataSource.query(`INSERT INTO ${w.c}.effects (job_id, attempt, worker_id) VALUES (?, 1, 'w1')`, [id]);
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
    const t = await w.now();
    for (const worker of ['w1', 'w2', 'w3']) {
      const id = await w.enqueue('limited', 'succeeded', { concurrencyKey: 'tenant:y', concurrencyLimit: 2 });
      await w.run(id, worker, 'succeeded', { key: 'tenant:y', startedAt: t - 3_000, endedAt: t - 1_000 });
    }
    expect((await w.check()).safety).toEqual(only('limitViolations'));
  });

  it('limit exceeded: keys are compared as bytes, so "tenant:y " is not "tenant:y"', async () => {
    const t = await w.now();
    for (const [worker, key] of [['w1', 'tenant:y'], ['w2', 'tenant:y'], ['w3', 'tenant:y ']] as const) {
      const id = await w.enqueue('limited', 'succeeded', { concurrencyKey: key, concurrencyLimit: 2 });
      await w.run(id, worker, 'succeeded', { key, startedAt: t - 3_000, endedAt: t - 1_000 });
    }
    expect((await w.check()).safety).toEqual(only('lost', 0));
  });

  it('poison wrong: a poison job dead-lettered before its last attempt', async () => {
    const id = await w.enqueue('poison', 'dead_lettered', { maxAttempts: 3 });
    await w.run(id, 'w1', 'dead_lettered');
    expect((await w.check()).safety).toEqual(only('poisonWrong'));
  });

  it('dependant early: a dependant that ran before its parent finished', async () => {
    const parent = await w.enqueue('graph', 'succeeded');
    const child = await w.enqueue('graph', 'succeeded', { dependsOn: [parent] });
    const t = await w.now();
    await w.run(parent, 'w1', 'succeeded');
    await w.run(child, 'w1', 'succeeded');
    await dataSource.query(`UPDATE ${w.c}.executions SET started_at = ? WHERE job_id = ?`, [utc(t - 1_000), child]);
    expect((await w.check()).safety).toEqual(only('dependantsEarly'));
  });
});

type Kind = 'succeeded' | 'failed' | 'dead_lettered';

/** A DATETIME(3) text in UTC, as the chaos run writes instants. */
const utc = (ms: number) => new Date(ms).toISOString().slice(0, 23).replace('T', ' ');

/** A scheduler database and a chaos database, with helpers that write what a chaos run would. */
class World {
  private constructor(
    private readonly dataSource: DataSource,
    readonly store: MysqlJobStore,
    readonly chaos: string,
    readonly scheduler: string,
  ) {}

  /** The quoted chaos database. */
  get c(): string {
    return `\`${this.chaos}\``;
  }

  static async create(dataSource: DataSource, databases: string[]): Promise<World> {
    const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
    const chaos = `chaos_${tag}`;
    const scheduler = `chaos_sched_${tag}`;
    databases.push(chaos, scheduler);
    // The DataSource's sessions take one statement at a time.
    for (const statement of chaosTablesSql(chaos, MARIADB_DIALECT).split(/;\s*$/m).filter((s) => s.trim())) await dataSource.query(statement);
    await dataSource.query(`CREATE DATABASE \`${scheduler}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    const store = new MysqlJobStore({ dataSource, database: scheduler });
    await store.migrate();
    const world = new World(dataSource, store, chaos, scheduler);
    await dataSource.query(leaseAuditSql(world.names, MARIADB_DIALECT));
    return world;
  }

  get names() {
    return { chaos: this.chaos, scheduler: this.scheduler, prefix: this.store.naming.prefix };
  }

  table(name: string): string {
    return `\`${this.scheduler}\`.\`${this.store.naming.prefix}${name}\``;
  }

  check() {
    const sql: Sql = (text, params) => this.dataSource.query(text, params as unknown[]);
    return runChecks(sql, this.names, 2_500, MARIADB_DIALECT);
  }

  /** The database's clock, in epoch milliseconds. */
  async now(): Promise<number> {
    const [{ t }] = await this.dataSource.query(`SELECT ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000) AS t`);
    return Number(t);
  }

  async enqueue(
    kind: string,
    expected: string,
    options: { maxAttempts?: number; dependsOn?: string[]; concurrencyKey?: string; concurrencyLimit?: number } = {},
  ): Promise<string> {
    const id = randomUUID();
    await this.store.jobEnqueue({ job: { id, name: `chaos.${kind}`, payload: {}, maxAttempts: options.maxAttempts ?? 5, ...options } });
    await this.dataSource.query(`INSERT INTO ${this.c}.enqueued (job_id, name, kind, expected, producer, parents, mode) VALUES (?, ?, ?, ?, 'p1', ?, ?)`, [
      id,
      `chaos.${kind}`,
      kind,
      expected,
      JSON.stringify(options.dependsOn ?? []),
      options.dependsOn ? 'on_success' : null,
    ]);
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
      `INSERT INTO ${this.c}.executions (worker_id, job_id, attempt, name, \`key\`, started_at, ended_at, threw)
       VALUES (?, ?, ?, 'chaos', ?, COALESCE(?, UTC_TIMESTAMP(3)), COALESCE(?, UTC_TIMESTAMP(3)), FALSE)`,
      [worker, id, attempt, o.key ?? null, o.startedAt === undefined ? null : utc(o.startedAt), o.endedAt === undefined ? null : utc(o.endedAt)],
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
      await this.dataSource.query(`INSERT INTO ${this.c}.effects (job_id, attempt, worker_id) VALUES (?, ?, ?)`, [id, attempt, worker]);
    }
    const outcome =
      kind === 'succeeded'
        ? { jobId: id, attempt, kind }
        : kind === 'failed'
          ? { jobId: id, attempt, kind, error: o.error ?? 'boom', retryDelayMs: 0 }
          : { jobId: id, attempt, kind, error: o.error ?? 'boom' };
    const [result] = await this.store.jobCompleteMany({ workerId: worker, outcomes: [outcome] });
    await this.dataSource.query(`INSERT INTO ${this.c}.settled (worker_id, job_id, attempt, kind, status, state, at) VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3))`, [
      worker,
      id,
      attempt,
      kind,
      result!.status,
      result!.status === 'applied' ? result!.state : null,
    ]);
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
    const t = await this.now();
    for (const worker of ['w1', 'w2']) {
      const id = await this.enqueue('limited', 'succeeded', { concurrencyKey: 'tenant:x', concurrencyLimit: 2 });
      await this.run(id, worker, 'succeeded', { key: 'tenant:x', startedAt: t - 3_000, endedAt: t - 1_000 });
    }
    const parent = await this.enqueue('graph', 'succeeded');
    const child = await this.enqueue('graph', 'succeeded', { dependsOn: [parent] });
    await this.run(parent, 'w1', 'succeeded');
    await this.run(child, 'w2', 'succeeded');
    // w3 reports on a lease it no longer holds: refused, and counted as observed, not as an anomaly.
    const late = await this.enqueue('plain', 'succeeded');
    await this.run(late, 'w1', 'succeeded');
    const [result] = await this.store.jobCompleteMany({ workerId: 'w3', outcomes: [{ jobId: late, attempt: 1, kind: 'succeeded' }] });
    await this.dataSource.query(`INSERT INTO ${this.c}.settled (worker_id, job_id, attempt, kind, status, at) VALUES ('w3', ?, 1, 'succeeded', ?, UTC_TIMESTAMP(3))`, [
      late,
      result!.status,
    ]);
  }
}
