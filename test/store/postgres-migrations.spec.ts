import { describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { LATEST_SCHEMA_VERSION, PostgresJobStore } from '../../lib/store/index.js';
import { databaseUrl, uniqueSchema } from '../support/postgres.js';
import { dataSource, freshStore, schemas, stores, useAdapterDataSource } from '../support/postgres-adapter.js';

useAdapterDataSource();

describe('PostgreSQL migrations', () => {
  it('lets two nodes migrate one schema at the same moment, applying each migration once', async () => {
    const schema = uniqueSchema('mig');
    schemas.push(schema);
    const a = new PostgresJobStore({ dataSource, schema });
    const b = new PostgresJobStore({ dataSource, schema });
    await Promise.all([a.migrate(), b.migrate(), a.migrate()]);
    await b.migrate();
    const applied = await dataSource.query(`SELECT version, name FROM "${schema}"."migrations" ORDER BY version`);
    expect(applied).toEqual([
      { version: 1, name: 'create_jobs' },
      { version: 2, name: 'schedules' },
      { version: 3, name: 'effects' },
      { version: 4, name: 'lease_index' },
      { version: 5, name: 'retired_slots' },
      { version: 6, name: 'history_key' },
      { version: 7, name: 'jobs_fill_factor' },
      { version: 8, name: 'unique_keys_and_retry' },
      { version: 9, name: 'limit_surplus' },
      { version: 10, name: 'paused_queues' },
      { version: 11, name: 'bounded_maintenance' },
      { version: 12, name: 'listing_index_and_counts' },
      { version: 13, name: 'node_registry' },
      { version: 14, name: 'trace_context' },
      { version: 15, name: 'priority' },
      { version: 16, name: 'progress' },
      { version: 17, name: 'rate_limits' },
      { version: 18, name: 'held_back_lanes' },
      { version: 19, name: 'lean_finish' },
      { version: 20, name: 'snoozes' },
      { version: 21, name: 'windows' },
      { version: 22, name: 'sequences' },
      { version: 23, name: 'batches' },
      { version: 24, name: 'groups' },
      { version: 25, name: 'group_listing' },
      { version: 26, name: 'history_lease' },
      { version: 27, name: 'parked_due_apart' },
    ]);
    const { id } = await a.jobEnqueue({ job: { name: 'after.migrate', payload: 1 } });
    expect(await b.jobGet({ jobId: id })).toMatchObject({ name: 'after.migrate', progress: null });
  });

  it('creates the partial claim indexes, and prefixes tables and indexes when asked', async () => {
    const store = freshStore({ tablePrefix: 'app_' });
    await store.migrate();
    const { schema } = store.naming;
    const tables = await dataSource.query(`SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename`, [schema]);
    expect(tables.map((t: { tablename: string }) => t.tablename)).toEqual([
      'app_audit_log',
      'app_concurrency_limits',
      'app_concurrency_slots',
      'app_dependencies',
      'app_installed',
      'app_job_count_deltas',
      'app_job_counts',
      'app_job_history',
      'app_jobs',
      'app_maintenance',
      'app_migrations',
      'app_nodes',
      'app_observer_cursors',
      'app_queues',
      'app_rate_limits',
      'app_rate_starts',
      'app_schedules',
      'app_sequences',
    ]);
    const indexes = await dataSource.query(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'app_jobs' ORDER BY indexname`, [schema]);
    const byName = Object.fromEntries(indexes.map((i: { indexname: string; indexdef: string }) => [i.indexname, i.indexdef]));
    expect(byName.app_jobs_claim_idx).toMatch(/\(priority, run_at, seq\) WHERE \(\(state = 'scheduled'::text\) AND \(parked_key IS NULL\)\)$/);
    // Jobs a limit held back wait in lanes (queue, key) of their own, in claim order, and by run time for the operator reads.
    expect(byName.app_jobs_lane_idx).toMatch(/\(queue, parked_key, priority, run_at, seq\) WHERE \(\(state = 'scheduled'::text\) AND \(parked_key IS NOT NULL\)\)$/);
    // The run-time index's predicate is one no claim's conditions imply (migration 0027), so it never competes with the lane index.
    expect(byName.app_jobs_parked_due_idx).toMatch(/\(run_at, seq\) WHERE \(\(state = 'scheduled'::text\) AND \(COALESCE\(parked_key, ''::text\) <> ''::text\)\)$/);
    expect(byName.app_jobs_lease_idx).toMatch(/\(leased_until\) WHERE \(state = 'running'::text\)/);
    expect(byName.app_jobs_running_idx).toBeUndefined();
    expect(byName.app_jobs_dead_letter_idx).toMatch(/WHERE \(state = 'dead_lettered'::text\)/);
    expect(byName.app_jobs_state_seq_idx).toMatch(/ \(state, seq\)$/);
    // A batch's jobs, and the distinct batch ids, from an index that holds only jobs of a batch.
    expect(byName.app_jobs_batch_idx).toMatch(/\(batch_id\) WHERE \(batch_id IS NOT NULL\)$/);
    // The groups listing reads scheduled grouped jobs alone, by group and run time.
    expect(byName.app_jobs_group_idx).toMatch(/\(group_key, run_at, seq\) WHERE \(\(state = 'scheduled'::text\) AND \(group_key IS NOT NULL\)\)$/);
    const checks = await dataSource.query(
      `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1::regclass AND conname IN ('app_jobs_dependency_mode_check', 'app_jobs_batch_callback_check') ORDER BY conname`,
      [store.naming.jobs],
    );
    expect(checks.map((c: { conname: string; def: string }) => [c.conname, c.def])).toEqual([
      ['app_jobs_batch_callback_check', expect.stringMatching(/'success'.*'complete'.*'failure'.* NOT VALID$/)],
      ['app_jobs_dependency_mode_check', expect.stringMatching(/'on_success'.*'on_any_terminal'.*'on_failure'.* NOT VALID$/)],
    ]);
    expect(byName.app_jobs_unique_key_idx).toMatch(/^CREATE UNIQUE INDEX .* \(name, unique_key\) WHERE \(\(unique_key IS NOT NULL\) AND \(state = ANY \(ARRAY\['scheduled'::text, 'awaiting_parents'::text, 'running'::text\]\)\)\)$/);
    // Claims read the paused queues alone, through an index that holds nothing else.
    const queues = await dataSource.query(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'app_queues' ORDER BY indexname`, [schema]);
    expect(queues.map((i: { indexname: string; indexdef: string }) => [i.indexname, i.indexdef.replace(/^.* USING btree /, '')])).toEqual([
      ['app_queues_paused_idx', '(name) WHERE paused'],
      ['app_queues_pkey', '(name)'],
    ]);
    // The history's key is its delivery order; no third index on id alone.
    const history = await dataSource.query(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'app_job_history' ORDER BY indexname`, [schema]);
    expect(history.map((i: { indexname: string; indexdef: string }) => [i.indexname, i.indexdef.replace(/^.* USING btree /, '')])).toEqual([
      ['app_job_history_job_idx', '(job_id, id)'],
      ['app_job_history_pkey', '(tx, id)'],
    ]);
  });

  it('leaves room on each page of jobs, so a claim keeps the new version of a job on its own page', async () => {
    const store = freshStore();
    await store.migrate();
    const { jobs } = store.naming;
    const [{ reloptions }] = await dataSource.query(`SELECT reloptions FROM pg_class WHERE oid = $1::regclass`, [jobs]);
    expect(reloptions).toEqual(['fillfactor=50']);
    await store.jobEnqueueMany({ jobs: Array.from({ length: 60 }, (_, k) => ({ name: 'page', payload: { k, pad: 'x'.repeat(100) } })) });
    const pageOf = async () =>
      new Map(
        (await dataSource.query(`SELECT id, (ctid::text::point)[0]::int AS page FROM ${jobs}`)).map((r: { id: string; page: number }) => [r.id, r.page] as const),
      );
    const inserted = await pageOf();
    // Inserts stop at half a page: the first page is left with room, and the batch spills onto more.
    const firstPage = [...inserted].filter(([, page]) => page === 0).map(([id]) => id);
    expect(firstPage.length).toBeGreaterThan(1);
    expect(new Set(inserted.values()).size).toBeGreaterThan(1);
    // Claims take jobs in enqueue order, so this claim takes the first page's jobs.
    const claimed = await store.jobClaim({ workerId: 'w', limit: firstPage.length, queues: ['default'], leaseMs: 60_000 });
    expect(new Set(claimed.map((job) => job.id))).toEqual(new Set(firstPage));
    const after = await pageOf();
    const moved = firstPage.filter((id) => after.get(id) !== 0);
    // A full page sends every new version elsewhere (28 of 28 moved at fill factor 100; 0 of 14 at
    // 50, on PostgreSQL 15 and 18). A claimed version is a little wider than the inserted one, so
    // a few may spill.
    //
    // The outcome write is not asserted here: its versions fit on the page only once the claim's
    // replaced ones are pruned, and pruning waits for every older snapshot in the database, which
    // other suites sharing the server may hold (it failed a CI run that way: 14 of 14 moved).
    expect(moved.length).toBeLessThanOrEqual(firstPage.length / 4);
  });

  it('starts the bounded history trim at the end of a history that existed before version 11, and trims from there', async () => {
    const store = freshStore();
    await store.migrate();
    const { maintenance, migrations, history } = store.naming;
    // What version 10 had: no maintenance table, no finished-jobs, parent-edge or schedule-page index.
    await dataSource.query(`DROP TABLE ${maintenance}`);
    await dataSource.query(`DROP INDEX ${store.naming.table('jobs_finished_idx')}, ${store.naming.table('dependencies_parent_idx')}, ${store.naming.table('schedules_created_idx')}`);
    await dataSource.query(`DELETE FROM ${migrations} WHERE version = 11`);
    const { id } = await store.jobEnqueue({ job: { name: 'old', payload: 1, maxAttempts: 5 } });
    for (let attempt = 1; attempt <= 3; attempt++) {
      await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 });
      await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt, kind: 'failed', error: 'x', retryDelayMs: 0 }] });
    }
    const again = new PostgresJobStore({ dataSource, schema: store.naming.schema });
    stores.push(again);
    await again.migrate();
    const [last] = await dataSource.query(`SELECT tx::text, id::int FROM ${history} ORDER BY tx DESC, id DESC LIMIT 1`);
    expect(await dataSource.query(`SELECT task, last_tx::text AS tx, last_id::int AS id FROM ${maintenance} ORDER BY task`)).toEqual([
      { task: 'history_trim', tx: last.tx, id: last.id },
      { task: 'sweep', tx: '0', id: 0 },
    ]);
    // The old log was the old trim's to bound: the new one reads only what comes after it.
    expect(await again.historyTrim({ keep: 2, limit: 100 })).toEqual({ trimmed: 0, examined: 0 });
    await again.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 });
    expect(await again.historyTrim({ keep: 2, limit: 100 })).toEqual({ trimmed: 6, examined: 1 });
    expect(await again.jobHistory({ jobId: id })).toHaveLength(2);
  });

  it('re-keys the history by (tx, id) when migrating to version 6, keeping every entry, and trims by that key', async () => {
    const store = freshStore();
    await store.migrate();
    const history = store.naming.table('job_history');
    const migrations = store.naming.table('migrations');
    // What version 5 had: the id key and a separate (tx, id) index.
    await dataSource.query(`ALTER TABLE ${history} DROP CONSTRAINT job_history_pkey`);
    await dataSource.query(`ALTER TABLE ${history} ADD CONSTRAINT job_history_pkey PRIMARY KEY (id)`);
    await dataSource.query(`CREATE INDEX job_history_delivery_idx ON ${history} (tx, id)`);
    await dataSource.query(`DELETE FROM ${migrations} WHERE version = 6`);
    const { id } = await store.jobEnqueue({ job: { name: 'kept', payload: 1, maxAttempts: 3 } });
    for (let attempt = 1; attempt <= 2; attempt++) {
      await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 });
      await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt, kind: 'failed', error: `e${attempt}`, retryDelayMs: 0 }] });
    }
    await store.jobEnqueueMany({ jobs: [{ name: 'kept', payload: 2 }, { name: 'kept', payload: 3 }] });
    const before = await dataSource.query(`SELECT id, tx::text, job_id, state FROM ${history} ORDER BY id`);
    expect(before.filter((e: { job_id: string }) => e.job_id === id)).toHaveLength(5);
    expect(before).toHaveLength(7);
    const again = new PostgresJobStore({ dataSource, schema: store.naming.schema });
    stores.push(again);
    await again.migrate();
    expect(await dataSource.query(`SELECT id, tx::text, job_id, state FROM ${history} ORDER BY id`)).toEqual(before);
    const key = await dataSource.query(
      `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'`,
      [history],
    );
    expect(key).toEqual([{ def: 'PRIMARY KEY (tx, id)' }]);
    expect(await dataSource.query(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'job_history' ORDER BY indexname`, [store.naming.schema]))
      .toEqual([{ indexname: 'job_history_job_idx' }, { indexname: 'job_history_pkey' }]);
    expect(await again.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    // The trim deletes by the new key: the job keeps its newest entry only.
    expect(await again.historyTrim({ keep: 1, limit: 100 })).toEqual({ trimmed: 4, examined: 7 });
    expect((await again.jobHistory({ jobId: id })).map((e) => e.state)).toEqual(['scheduled']);
  });

  it('adds batches to a version-22 schema in place: its jobs keep their rows, and a waiting dependant settles as before', async () => {
    const store = freshStore();
    await store.migrate();
    const { jobs, migrations } = store.naming;
    // What version 22 had: no batch columns, no batch index, the two-mode check.
    await dataSource.query(`ALTER TABLE ${jobs} DROP COLUMN batch_id, DROP COLUMN batch_callback, DROP COLUMN parent_failed,
      DROP CONSTRAINT jobs_dependency_mode_check,
      ADD CONSTRAINT jobs_dependency_mode_check CHECK (dependency_mode IS NULL OR dependency_mode IN ('on_success', 'on_any_terminal'))`);
    await dataSource.query(`DELETE FROM ${migrations} WHERE version = 23`);
    const parent = await dataSource.query(`INSERT INTO ${jobs} (id, name, queue, payload, state, run_at, scheduled_for, max_attempts)
      VALUES (gen_random_uuid(), 'parent', 'default', '{}', 'scheduled', now(), now(), 1) RETURNING id`);
    const child = await dataSource.query(`INSERT INTO ${jobs} (id, name, queue, payload, state, run_at, scheduled_for, max_attempts, pending_parents, dependency_mode)
      VALUES (gen_random_uuid(), 'child', 'default', '{}', 'awaiting_parents', now(), now(), 1, 1, 'on_any_terminal') RETURNING id`);
    await dataSource.query(`INSERT INTO ${store.naming.dependencies} (child_id, parent_id) VALUES ($1, $2)`, [child[0].id, parent[0].id]);
    const again = new PostgresJobStore({ dataSource, schema: store.naming.schema });
    stores.push(again);
    await again.migrate();
    expect(await dataSource.query(`SELECT name FROM ${migrations} WHERE version = 23`)).toEqual([{ name: 'batches' }]);
    expect(await again.jobGet({ jobId: child[0].id })).toMatchObject({ state: 'awaiting_parents', dependencyMode: 'on_any_terminal', batch: null });
    expect(await dataSource.query(`SELECT parent_failed, batch_id, batch_callback FROM ${jobs} WHERE id = $1`, [child[0].id])).toEqual([
      { parent_failed: false, batch_id: null, batch_callback: null },
    ]);
    const [claimed] = await again.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 });
    expect(claimed!.id).toBe(parent[0].id);
    await again.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: claimed!.id, attempt: 1, kind: 'dead_lettered', error: 'x' }] });
    expect(await again.jobGet({ jobId: child[0].id })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    // The new mode and callback kinds are accepted, anything else refused.
    await expect(dataSource.query(`UPDATE ${jobs} SET dependency_mode = 'on_failure', batch_callback = 'failure' WHERE id = $1`, [child[0].id])).resolves.toBeDefined();
    await expect(dataSource.query(`UPDATE ${jobs} SET dependency_mode = 'whenever' WHERE id = $1`, [child[0].id])).rejects.toThrow(/jobs_dependency_mode_check/);
    await expect(dataSource.query(`UPDATE ${jobs} SET batch_callback = 'later' WHERE id = $1`, [child[0].id])).rejects.toThrow(/jobs_batch_callback_check/);
    expect(await again.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
  });

  it('adds the lease to a version-25 history in place: older entries keep NULL, and the reinstalled trigger records the lease from then on', async () => {
    const store = freshStore();
    await store.migrate();
    const { history, migrations } = store.naming;
    const { id } = await store.jobEnqueue({ job: { name: 'work', payload: 1 } });
    const [job] = await store.jobClaim({ workerId: 'w-old', limit: 1, queues: ['default'], leaseMs: 60_000 });
    // What version 25 had: no lease columns, no audit index by action.
    await dataSource.query(`ALTER TABLE ${history} DROP COLUMN worker_id, DROP COLUMN lease_until`);
    await dataSource.query(`DROP INDEX "${store.naming.schema}".${store.naming.local('audit_log_action_idx')}`);
    await dataSource.query(`DELETE FROM ${migrations} WHERE version = 26`);
    const again = new PostgresJobStore({ dataSource, schema: store.naming.schema });
    stores.push(again);
    await again.migrate();
    expect(await dataSource.query(`SELECT name FROM ${migrations} WHERE version = 26`)).toEqual([{ name: 'history_lease' }]);
    expect(await dataSource.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'audit_log_action_idx'`, [store.naming.schema])).toEqual([
      { indexdef: expect.stringMatching(/\(action, id\)$/) },
    ]);
    expect((await again.jobHistory({ jobId: id })).map((e) => [e.state, e.workerId, e.leaseUntil])).toEqual([
      ['scheduled', null, null],
      ['running', null, null],
    ]);
    await again.jobCompleteMany({ workerId: 'w-old', outcomes: [{ jobId: id, attempt: job!.attempt, kind: 'succeeded' }] });
    expect((await again.jobHistory({ jobId: id })).at(-1)).toMatchObject({ state: 'succeeded', workerId: 'w-old', leaseUntil: job!.leasedUntil });
  });

  it.each(['x; drop table y', 'a"b', "o'brien", 'a\nb', 's'.repeat(64), 'Public', 'x.job'])(
    'refuses the schema name %j before any SQL runs',
    async (schema) => {
      const before = await dataSource.query(`SELECT count(*)::int AS n FROM pg_namespace`);
      expect(() => new PostgresJobStore({ dataSource, schema })).toThrow(/^schema must be a lower-case SQL identifier/);
      expect(() => new PostgresJobStore({ dataSource, tablePrefix: schema })).toThrow(/tablePrefix/);
      expect(await dataSource.query(`SELECT count(*)::int AS n FROM pg_namespace`)).toEqual(before);
    },
  );

  it('refuses a DataSource of another type, or one not yet initialized', () => {
    const sqliteLike = { options: { type: 'better-sqlite3' }, isInitialized: true } as unknown as DataSource;
    expect(() => new PostgresJobStore({ dataSource: sqliteLike })).toThrow('PostgresJobStore needs a TypeORM DataSource of type "postgres".');
    const idle = new DataSource({ type: 'postgres', url: databaseUrl() });
    expect(() => new PostgresJobStore({ dataSource: idle })).toThrow(/initialized DataSource/);
  });
});
