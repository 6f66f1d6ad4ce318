import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { resolveLimits, type JobState } from '../../lib/core/index.js';
import type { StoreDriver } from '../../lib/store/checked/store-driver.js';
import { cutPage, matchesFilters, type DriverListParams } from '../../lib/store/job-page.js';
import { MysqlConnections } from '../../lib/store/mysql/mysql-connections.js';
import { MysqlDriverReads } from '../../lib/store/mysql/mysql-driver-reads.js';
import { fromMysqlInstant, toMysqlInstant } from '../../lib/store/mysql/mysql-instant.js';
import { mysqlInstall } from '../../lib/store/mysql/mysql-install.js';
import { migrateMysql } from '../../lib/store/mysql/mysql-migrator.js';
import { mysqlNaming, type MysqlNaming } from '../../lib/store/mysql/mysql-naming.js';
import { listJobs } from '../../lib/store/mysql/queries/list-jobs.query.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

const HOUR = 3_600_000;
const MINUTE = 60_000;
const ASTRAL = 'rocket 🚀, han 𠜎, snow ☃';

/** A job row to insert; every field has a default, instants are epoch ms. */
interface JobSeed {
  id?: string;
  name?: string;
  queue?: string;
  payload?: string;
  state?: JobState;
  runAt?: number;
  createdAt?: number;
  finishedAt?: number | null;
  leasedUntil?: number | null;
  workerId?: string | null;
  attempt?: number;
  priority?: number;
  parkedKey?: string | null;
  concurrencyKey?: string | null;
  output?: string | null;
  lastError?: string | null;
  dependencyMode?: 'on_success' | 'on_any_terminal' | null;
  cancelRequested?: boolean;
}

describe('MySQL store reads (MariaDB)', () => {
  let dataSource: DataSource;
  let naming: MysqlNaming;
  let conns: MysqlConnections;
  let driver: MysqlDriverReads;
  /** The database's clock when the case began, in epoch ms. */
  let now: number;

  const sql = (text: string, values: unknown[] = []) => dataSource.query(text, values) as Promise<Record<string, unknown>[]>;
  const at = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : toMysqlInstant(ms));

  /** Inserts a job with plain SQL and returns its id; a running job gets a worker and a live lease unless told otherwise. */
  async function job(seed: JobSeed = {}): Promise<string> {
    const id = seed.id ?? randomUUID();
    const state = seed.state ?? 'scheduled';
    const running = state === 'running';
    const created = seed.createdAt ?? now - HOUR;
    await sql(
      `INSERT INTO ${naming.jobs} (id, name, queue, payload, state, run_at, scheduled_for, attempt, max_attempts, worker_id, leased_until, cancel_requested,
         last_error, output, created_at, updated_at, finished_at, priority, parked_key, concurrency_key, dependency_mode)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 5, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        id,
        seed.name ?? 'task',
        seed.queue ?? 'default',
        seed.payload ?? '{"n":1}',
        state,
        at(seed.runAt ?? created),
        at(seed.runAt ?? created),
        seed.attempt ?? (running ? 1 : 0),
        running ? (seed.workerId ?? 'w1') : (seed.workerId ?? null),
        running ? at(seed.leasedUntil ?? now + HOUR) : null,
        seed.cancelRequested ? 1 : 0,
        seed.lastError ?? null,
        seed.output ?? null,
        at(created),
        at(created),
        at(seed.finishedAt),
        seed.priority ?? 0,
        seed.parkedKey ?? null,
        seed.concurrencyKey ?? null,
        seed.dependencyMode ?? null,
      ],
    );
    return id;
  }

  const edge = (child: string, parent: string, settled = false) =>
    sql(`INSERT INTO ${naming.dependencies} (child_id, parent_id, settled) VALUES (?, ?, ?)`, [child, parent, settled ? 1 : 0]);

  beforeAll(async () => {
    dataSource = await openMariadbDataSource({ poolSize: 2 });
    naming = mysqlNaming(uniquePrefix('reads'));
    conns = new MysqlConnections(dataSource, 2);
    await migrateMysql(conns, naming, mysqlInstall());
    driver = new MysqlDriverReads({ dataSource, naming, limits: resolveLimits(), historyPolicy: 'transitions_and_errors', finish: 'keep', poolSize: 4 });
  });
  afterAll(async () => {
    await driver.close();
    await conns.close();
    await dropInstallation(dataSource, naming);
    await dataSource.destroy();
  });
  beforeEach(async () => {
    for (const table of ['jobs', 'queues', 'dependencies', 'schedules', 'audit', 'limits', 'history', 'counts', 'countDeltas', 'rateLimits', 'rateStarts'] as const) {
      await sql(`DELETE FROM ${naming[table]}`);
    }
    now = fromMysqlInstant(((await sql(`SELECT DATE_FORMAT(UTC_TIMESTAMP(3), '%Y-%m-%d %H:%i:%s.%f') AS now`)) as [{ now: string }])[0].now).getTime();
  });

  it('reads a job whole: 4-byte characters in its JSON and text, instants to the millisecond in UTC, flags as booleans; null for an unknown id', async () => {
    const created = Date.UTC(2026, 2, 29, 1, 30, 0, 123); // a night clocks change in Europe: nothing shifts in UTC
    const id = await job({
      name: 'mail.send',
      queue: 'mail',
      payload: JSON.stringify({ text: ASTRAL }),
      state: 'running',
      createdAt: created,
      runAt: created + 7,
      leasedUntil: now + HOUR + 999,
      output: JSON.stringify(['𠜎']),
      lastError: `failed: ${ASTRAL}`,
      cancelRequested: true,
      priority: -3,
    });
    const read = await driver.jobGet({ jobId: id });
    expect(read).toMatchObject({
      id,
      name: 'mail.send',
      queue: 'mail',
      payload: { text: ASTRAL },
      state: 'running',
      attempt: 1,
      maxAttempts: 5,
      workerId: 'w1',
      cancelRequested: true,
      lastError: `failed: ${ASTRAL}`,
      output: ['𠜎'],
      priority: -3,
      finishedAt: null,
    });
    expect(read!.createdAt.toISOString()).toBe('2026-03-29T01:30:00.123Z');
    expect(read!.runAt.getTime()).toBe(created + 7);
    expect(read!.leasedUntil!.getTime()).toBe(now + HOUR + 999);
    expect(await driver.jobGet({ jobId: randomUUID() })).toBeNull();
  });

  it('reads the statuses of the jobs that exist among those asked, without their payloads', async () => {
    const done = await job({ state: 'succeeded', finishedAt: Date.UTC(2026, 0, 1, 0, 0, 0, 1), output: '{"ok":"✓🚀"}', attempt: 1 });
    const waiting = await job();
    const statuses = await driver.jobStatusMany({ jobIds: [done, randomUUID(), waiting] });
    const identity = { queue: 'default', concurrencyKey: null, uniqueKey: null, scheduleId: null, scheduledFor: expect.any(Date) };
    expect(statuses.sort((a, b) => (a.id === done ? -1 : b.id === done ? 1 : 0))).toEqual([
      { id: done, ...identity, state: 'succeeded', attempt: 1, maxAttempts: 5, lastError: null, output: { ok: '✓🚀' }, finishedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 1)) },
      { id: waiting, ...identity, state: 'scheduled', attempt: 0, maxAttempts: 5, lastError: null, output: null, finishedAt: null },
    ]);
    // The instant it was meant to run, to the millisecond, as jobGet reads it.
    expect(statuses.find((s) => s.id === waiting)!.scheduledFor.getTime()).toBe((await driver.jobGet({ jobId: waiting }))!.scheduledFor.getTime());
    expect(await driver.jobStatusMany({ jobIds: [] })).toEqual([]);
  });

  describe('job listings', () => {
    const idOf = (prefix: string, n: number) => `${prefix}-0000-7000-8000-${String(n).padStart(12, '0')}`;
    type Stored = { id: string; seq: number; state: JobState; queue: string; name: string; createdAt: number };

    /** 30 jobs whose states, queues, names, id prefixes and enqueue times interleave; running ones with leases in reverse order. */
    async function seed(): Promise<Stored[]> {
      const states: JobState[] = ['scheduled', 'running', 'succeeded', 'scheduled', 'dead_lettered', 'running', 'cancelled'];
      for (let i = 0; i < 30; i++) {
        const state = states[i % states.length]!;
        await job({
          id: idOf(i % 3 === 0 ? 'aaaaaaaa' : 'abbbbbbb', i),
          state,
          queue: i % 4 === 0 ? 'rare' : 'bulk',
          name: i % 2 === 0 ? 'even' : 'odd',
          createdAt: now - HOUR + Math.floor(i / 5) * MINUTE,
          leasedUntil: now + HOUR - i * 1000,
          finishedAt: ['succeeded', 'dead_lettered', 'cancelled'].includes(state) ? now - i * 1000 : null,
        });
      }
      const rows = await sql(`SELECT id, seq, state, queue, name, DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s.%f') AS created FROM ${naming.jobs} ORDER BY seq`);
      return rows.map((row) => ({
        id: row.id as string,
        seq: Number(row.seq),
        state: row.state as JobState,
        queue: row.queue as string,
        name: row.name as string,
        createdAt: fromMysqlInstant(row.created as string).getTime(),
      }));
    }

    /** What the listing must return, cut as every store cuts it: the first `scan` jobs past the cursor, in order, filtered. */
    function reference(stored: readonly Stored[], params: DriverListParams, scan: number) {
      const newest = params.order === 'newest';
      const cursor = params.cursor === undefined ? undefined : stored.find((row) => row.id === params.cursor)!.seq;
      const examined = stored
        .filter((row) => (cursor === undefined || (newest ? row.seq < cursor : row.seq > cursor)) && (params.state === undefined || row.state === params.state))
        .sort((a, b) => (newest ? b.seq - a.seq : a.seq - b.seq))
        .slice(0, scan);
      const page = cutPage(
        examined.map((row, i) => ({ row, id: row.id, position: i + 1, matches: matchesFilters(row, params) })),
        params.limit,
        scan,
      );
      return { ids: page.rows.map((row) => row.id), next: page.next };
    }

    it('cuts every page where the other stores cut it, for each order, filter, page size and scan bound, following next to the end', async () => {
      const stored = await seed();
      const minute = (n: number) => now - HOUR + n * MINUTE;
      const filters: Omit<DriverListParams, 'order' | 'limit'>[] = [
        {},
        { state: 'scheduled' },
        { state: 'running' },
        { state: 'succeeded' },
        { state: 'quarantined' },
        { queue: 'rare' },
        { name: 'odd', state: 'running' },
        { idPrefix: 'aaaaaaaa-0000-7000-8000-00000000001' },
        { idPrefix: 'ab' },
        { enqueuedAfter: minute(2) },
        { enqueuedBefore: minute(2), queue: 'bulk' },
        { enqueuedAfter: minute(1), enqueuedBefore: minute(4), name: 'even' },
        // Names no job has: one no ASCII name can be, and one that differs only by a trailing space.
        { name: `é${ASTRAL}` },
        { name: 'odd ' },
      ];
      let pagesRead = 0;
      for (const filter of filters) {
        for (const order of ['newest', 'oldest'] as const) {
          for (const limit of [1, 2, 7, 50]) {
            for (const scan of [3, 5, 10_000]) {
              let cursor: string | undefined;
              const seen: string[] = [];
              for (;;) {
                const params: DriverListParams = { ...filter, order, limit, ...(cursor === undefined ? {} : { cursor }) };
                const page = await conns.session((db) => listJobs(db, naming, params, scan));
                const want = reference(stored, params, scan);
                expect({ params, scan, ids: page!.rows.map((row) => row.id), next: page!.next }).toEqual({ params, scan, ...want });
                pagesRead += 1;
                seen.push(...want.ids);
                if (page!.next === null) break;
                cursor = page!.next;
              }
              // Followed to the end, the pages hold every match exactly once.
              const all = reference(stored, { ...filter, order, limit: 1_000 }, 10_000).ids;
              expect(seen).toEqual(all);
            }
          }
        }
      }
      expect(pagesRead).toBeGreaterThan(500);
    });

    it('lists running jobs in enqueue order whatever their lease ends, and refuses a cursor that names no job with null', async () => {
      const stored = await seed();
      const running = stored.filter((row) => row.state === 'running').map((row) => row.id);
      const page = await driver.jobListPage({ state: 'running', order: 'oldest', limit: 100 });
      expect(page!.jobs.map((j) => j.id)).toEqual(running);
      expect(page!.next).toBeNull();
      // Their leases run the other way, so a read in lease order would have reversed them.
      const leases = page!.jobs.map((j) => j.leasedUntil!.getTime());
      expect([...leases].sort((a, b) => b - a)).toEqual(leases);
      expect(await driver.jobListPage({ order: 'newest', limit: 5, cursor: randomUUID() })).toBeNull();
      expect(await driver.jobListPage({ order: 'oldest', limit: 5, state: 'running', queue: 'rare', cursor: randomUUID() })).toBeNull();
      const first = await driver.jobListPage({ order: 'newest', limit: 2 });
      expect(first!.jobs.map((j) => j.id)).toEqual([stored[29]!.id, stored[28]!.id]);
      expect(first!.next).toBe(stored[28]!.id);
    });

    it('lists dead-lettered jobs most recently dead-lettered first, ties newest enqueued first', async () => {
      const tie = now - MINUTE;
      const a = await job({ state: 'dead_lettered', finishedAt: tie });
      const b = await job({ state: 'dead_lettered', finishedAt: now - HOUR });
      const c = await job({ state: 'dead_lettered', finishedAt: tie });
      const d = await job({ state: 'dead_lettered', finishedAt: now - 1 });
      await job({ state: 'succeeded', finishedAt: now });
      expect((await driver.jobListDeadLettered({ limit: 10 })).map((j) => j.id)).toEqual([d, c, a, b]);
      expect((await driver.jobListDeadLettered({ limit: 2 })).map((j) => j.id)).toEqual([d, c]);
    });
  });

  it('reads a job’s edges each way, up to limit + 1 per side, with the states that decide satisfaction; null for an unknown id', async () => {
    const parentA = await job({ name: 'p.a', queue: 'p', state: 'succeeded', finishedAt: now });
    const parentB = await job({ name: 'p.b', queue: 'p', state: 'dead_lettered', finishedAt: now });
    const child = await job({ name: 'c', queue: 'c', state: 'awaiting_parents', dependencyMode: 'on_any_terminal' });
    await edge(child, parentA, true);
    await edge(child, parentB, false);
    const edges = await driver.jobEdges({ id: child, limit: 10 });
    expect(edges!.dependants).toEqual([]);
    expect(edges!.parents).toEqual(
      [
        { id: parentA, name: 'p.a', queue: 'p', state: 'succeeded', settled: true, parentState: 'succeeded', mode: 'on_any_terminal', sequence: null, traceparent: null, tracestate: null },
        { id: parentB, name: 'p.b', queue: 'p', state: 'dead_lettered', settled: false, parentState: 'dead_lettered', mode: 'on_any_terminal', sequence: null, traceparent: null, tracestate: null },
      ].sort((x, y) => (x.id < y.id ? -1 : 1)),
    );
    const fanOut: string[] = [];
    for (let i = 0; i < 5; i++) {
      fanOut.push(await job({ name: `d${i}`, state: 'awaiting_parents', dependencyMode: 'on_success' }));
      await edge(fanOut[i]!, parentA, true);
    }
    const cut = await driver.jobEdges({ id: parentA, limit: 3 });
    expect(cut!.parents).toEqual([]);
    expect(cut!.dependants).toHaveLength(4);
    expect(cut!.dependants.every((e) => [child, ...fanOut].includes(e.id) && e.parentState === 'succeeded' && e.settled)).toBe(true);
    expect((await driver.jobEdges({ id: parentA, limit: 10 }))!.dependants.map((e) => e.mode).sort()).toEqual(['on_any_terminal', ...Array(5).fill('on_success')].sort());
    expect(await driver.jobEdges({ id: randomUUID(), limit: 10 })).toBeNull();
  });

  it('lists a limit’s holders: running jobs of its queue or key with a live lease, soonest lease end first, then id', async () => {
    await sql(`INSERT INTO ${naming.limits} (\`key\`, max, updated_at) VALUES ('queue:q', 3, UTC_TIMESTAMP(3)), ('key:tenant 🚀', 2, UTC_TIMESTAMP(3))`);
    const lease = now + HOUR;
    const late = await job({ queue: 'q', state: 'running', leasedUntil: lease + 5, workerId: 'w2', attempt: 2 });
    const tiedA = await job({ id: 'bbbbbbbb-0000-7000-8000-000000000001', queue: 'q', state: 'running', leasedUntil: lease });
    const tiedB = await job({ id: 'aaaaaaaa-0000-7000-8000-000000000001', queue: 'q', state: 'running', leasedUntil: lease });
    await job({ queue: 'q', state: 'running', leasedUntil: now - 1 }); // lapsed: holds nothing
    await job({ queue: 'q' }); // waiting: holds nothing
    await job({ queue: 'other', state: 'running' });
    const keyed = await job({ queue: 'other', state: 'running', concurrencyKey: 'tenant 🚀', leasedUntil: lease + 1 });

    const held = await driver.limitHolders({ key: 'queue:q', limit: 10 });
    expect(held.max).toBe(3);
    expect(held.holders.map((h) => h.jobId)).toEqual([tiedB, tiedA, late]);
    expect(held.holders[2]).toEqual({ jobId: late, name: 'task', queue: 'q', workerId: 'w2', attempt: 2, leasedUntil: new Date(lease + 5) });
    // limit + 1, so the caller can tell there were more.
    expect((await driver.limitHolders({ key: 'queue:q', limit: 1 })).holders.map((h) => h.jobId)).toEqual([tiedB, tiedA]);
    expect(await driver.limitHolders({ key: 'key:tenant 🚀', limit: 10 })).toEqual({
      max: 2,
      holders: [{ jobId: keyed, name: 'task', queue: 'other', workerId: 'w1', attempt: 1, leasedUntil: new Date(lease + 1) }],
    });
    // No limit: nothing holds one, even where jobs run.
    expect(await driver.limitHolders({ key: 'queue:other', limit: 10 })).toEqual({ max: null, holders: [] });
  });

  it('finds each queue’s oldest due job among the first due jobs in run order, across priorities and parked jobs, and says where it stopped', async () => {
    const t0 = now - HOUR;
    const runAts = { a: [t0 + 5, t0 + 1], b: [t0 + 2], parked: [t0 + 3], late: [now + HOUR] };
    await job({ queue: 'a', runAt: runAts.a[0], priority: 10 });
    await job({ queue: 'a', runAt: runAts.a[1], priority: -10 });
    await job({ queue: 'b', runAt: runAts.b[0], priority: 4 });
    await job({ queue: 'b', runAt: runAts.parked[0], parkedKey: 'queue:b' });
    await job({ queue: 'c', runAt: runAts.late[0] }); // not due
    await job({ queue: 'c', state: 'running', runAt: t0 }); // not waiting

    const all = await driver.queueOldestDue({ queues: null, scan: 100 });
    expect(Object.fromEntries(all.oldest)).toEqual({ a: t0 + 1, b: t0 + 2 });
    expect(Object.fromEntries(all.due)).toEqual({ a: 2, b: 2 });
    expect(all.examined).toBe(4);
    expect(all.last).toBe(t0 + 5);
    expect(all.now).toBeGreaterThanOrEqual(now);

    // Three examined: the run order is a(-10), b(4), b(parked); a's priority-10 job is past the bound.
    const cut = await driver.queueOldestDue({ queues: ['a', 'nowhere'], scan: 3 });
    expect(cut).toEqual({ oldest: new Map([['a', t0 + 1]]), due: new Map([['a', 1]]), examined: 3, last: t0 + 3, now: cut.now });

    await sql(`DELETE FROM ${naming.jobs} WHERE state = 'scheduled' AND run_at <= UTC_TIMESTAMP(3)`);
    expect(await driver.queueOldestDue({ queues: null, scan: 100 })).toEqual({ oldest: new Map(), due: new Map(), examined: 0, last: null, now: expect.any(Number) });
  });

  it('counts finished jobs per bucket from each source, stops each at the scan bound, and filters by queue after reading', async () => {
    const since = now - 10 * MINUTE;
    // Buckets of a minute from `since`: a job finished on a bucket's first millisecond is in that bucket.
    await job({ queue: 'a', state: 'succeeded', finishedAt: since });
    await job({ queue: 'a', state: 'succeeded', finishedAt: since + MINUTE - 1 });
    await job({ queue: 'b', state: 'succeeded', finishedAt: since + MINUTE });
    await job({ queue: 'b', state: 'cancelled', finishedAt: since + 3 * MINUTE + 5 });
    await job({ queue: 'a', state: 'dead_lettered', finishedAt: since + 2 * MINUTE });
    await job({ queue: 'a', state: 'succeeded', finishedAt: since - 1 }); // before the window
    const byBucket = (counts: readonly { bucket: number; state: JobState; count: number }[]) =>
      Object.fromEntries(counts.map((c) => [`${c.bucket}:${c.state}`, c.count]));

    const all = await driver.jobThroughput({ since, bucketMs: MINUTE, queue: null, scan: 100 });
    expect(byBucket(all.counts)).toEqual({ '0:succeeded': 2, '1:succeeded': 1, '3:cancelled': 1, '2:dead_lettered': 1 });
    expect(all.read).toEqual({ done: { rows: 4, oldest: since }, dead: { rows: 1, oldest: since + 2 * MINUTE } });
    expect(all.now).toBeGreaterThanOrEqual(now);

    const b = await driver.jobThroughput({ since, bucketMs: MINUTE, queue: 'b', scan: 100 });
    expect(byBucket(b.counts)).toEqual({ '1:succeeded': 1, '3:cancelled': 1 });
    // The filter applies to what was read: the sources read as much as without it.
    expect(b.read).toEqual(all.read);

    // Two rows of the done source: the newest two, merged across succeeded and cancelled.
    const capped = await driver.jobThroughput({ since, bucketMs: MINUTE, queue: null, scan: 2 });
    expect(byBucket(capped.counts)).toEqual({ '1:succeeded': 1, '3:cancelled': 1, '2:dead_lettered': 1 });
    expect(capped.read.done).toEqual({ rows: 2, oldest: since + MINUTE });
  });

  it('reads a job’s history oldest first, pages back from an entry, and hands out positions the log readers gave', async () => {
    const id = await job();
    const other = await job();
    for (let i = 0; i < 5; i++) {
      await sql(`INSERT INTO ${naming.history} (job_id, name, at, state, attempt, error) VALUES (?, 'task', ?, ?, ?, ?)`, [
        i === 2 ? other : id,
        toMysqlInstant(now - HOUR + i * 1001),
        i % 2 === 0 ? 'scheduled' : 'running',
        i,
        i === 3 ? `boom ${ASTRAL}` : null,
      ]);
    }
    const full = await driver.jobHistory({ jobId: id, limit: null, before: null });
    expect(full.map((e) => [e.state, e.attempt, e.error])).toEqual([
      ['scheduled', 0, null],
      ['running', 1, null],
      ['running', 3, `boom ${ASTRAL}`],
      ['scheduled', 4, null],
    ]);
    expect(full[3]!.at.getTime()).toBe(now - HOUR + 4 * 1001);
    // Positions were handed out on the way, in write order, once each: every entry of the log has one now.
    const positions = full.map((e) => Number(e.position));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((x, y) => x - y)).toEqual(positions);
    expect(Number((await sql(`SELECT COUNT(*) AS n FROM ${naming.history} WHERE pos IS NULL`))[0]!.n)).toBe(0);

    expect(await driver.jobHistory({ jobId: id, limit: 2, before: null })).toEqual(full.slice(2));
    expect(await driver.jobHistory({ jobId: id, limit: 2, before: full[2]!.id })).toEqual(full.slice(0, 2));
    expect(await driver.jobHistory({ jobId: id, limit: 2, before: full[0]!.id })).toEqual([]);
  });

  describe('counts and queues', () => {
    /** Folded counts and unfolded changes, as the writers and the fold leave them. */
    async function counts(): Promise<void> {
      await sql(`INSERT INTO ${naming.counts} (queue, state, count) VALUES ('mail', 'scheduled', 5), ('mail', 'running', 1), ('mz', 'succeeded', 2), ('zero', 'scheduled', 0)`);
      await sql(
        `INSERT INTO ${naming.countDeltas} (queue, state, delta) VALUES ('mail', 'scheduled', -1), ('mail', 'running', 1), ('mz', 'succeeded', -2), ('new', 'cancelled', 1), ('new', 'awaiting_parents', 3)`,
      );
      await sql(`INSERT INTO ${naming.queues} (name, paused, updated_at) VALUES ('idle', 1, UTC_TIMESTAMP(3)), ('mail', 0, UTC_TIMESTAMP(3))`);
    }

    it('sums folded counts and unfolded changes, leaving out pairs that come to nothing, sorted by queue and then state name', async () => {
      await counts();
      await job({ queue: 'mail', runAt: now - 2 * HOUR, priority: 7 });
      await job({ queue: 'mail', runAt: now - 3 * HOUR, parkedKey: 'queue:mail' });
      await job({ queue: 'mail', runAt: now - 4 * HOUR, state: 'running' });
      const stats = await driver.jobStats();
      expect(stats.counts).toEqual([
        { queue: 'mail', state: 'running', count: 2 },
        { queue: 'mail', state: 'scheduled', count: 4 },
        // 'awaiting_parents' sorts before 'cancelled' by name, though the ENUM holds it after.
        { queue: 'new', state: 'awaiting_parents', count: 3 },
        { queue: 'new', state: 'cancelled', count: 1 },
      ]);
      expect(stats.oldestDueAt).toEqual(new Date(now - 3 * HOUR));
      expect(stats.now.getTime()).toBeGreaterThanOrEqual(now);
      await sql(`DELETE FROM ${naming.jobs}`);
      expect((await driver.jobStats()).oldestDueAt).toBeNull();

      expect(await driver.jobCountTotals()).toEqual({ counts: { running: 2, scheduled: 4, awaiting_parents: 3, cancelled: 1 }, queues: 3 });
      await sql(`DELETE FROM ${naming.counts}`);
      await sql(`DELETE FROM ${naming.countDeltas}`);
      await sql(`DELETE FROM ${naming.queues}`);
      expect(await driver.jobCountTotals()).toEqual({ counts: {}, queues: 0 });
    });

    it('lists every queue, a page of names in order whose emptied queues are made up for, or the named ones that exist', async () => {
      await counts();
      const mail = { name: 'mail', paused: false, counts: { scheduled: 4, running: 2 } };
      const idle = { name: 'idle', paused: true, counts: {} };
      const fresh = { name: 'new', paused: false, counts: { cancelled: 1, awaiting_parents: 3 } };
      expect(await driver.queueList({ kind: 'all' })).toEqual([idle, mail, fresh]);
      expect(await driver.queueList({ kind: 'page', limit: 2, after: '' })).toEqual([idle, mail]);
      // 'mz' is picked after 'mail' (its folded count is not zero) and turns out empty: the page picks on.
      expect(await driver.queueList({ kind: 'page', limit: 1, after: 'mail' })).toEqual([fresh]);
      expect(await driver.queueList({ kind: 'page', limit: 5, after: 'mail' })).toEqual([fresh]);
      expect(await driver.queueList({ kind: 'page', limit: 5, after: 'new' })).toEqual([]);
      expect(await driver.queueList({ kind: 'named', queues: ['idle', 'mail', 'mz', 'nowhere'] })).toEqual([idle, mail]);
      expect(await driver.queueList({ kind: 'named', queues: [] })).toEqual([]);
    });
  });

  it('pages limits and rate limits in key order, and reads a rate limit’s window by the database’s clock', async () => {
    await sql(`INSERT INTO ${naming.limits} (\`key\`, max, updated_at) VALUES ('queue:b', 2, UTC_TIMESTAMP(3)), ('key:a', 1, UTC_TIMESTAMP(3)), ('queue:a', 3, UTC_TIMESTAMP(3))`);
    expect(await driver.concurrencyLimitList({ limit: null, after: '' })).toEqual([{ key: 'a', max: 1 }, { queue: 'a', max: 3 }, { queue: 'b', max: 2 }]);
    expect(await driver.concurrencyLimitList({ limit: 1, after: 'key:a' })).toEqual([{ queue: 'a', max: 3 }]);

    const perMs = 10 * MINUTE;
    await sql(`INSERT INTO ${naming.rateLimits} (\`key\`, max, per_ms, updated_at) VALUES ('queue:r', 3, ?, UTC_TIMESTAMP(3)), ('key:k', 2, 1000, UTC_TIMESTAMP(3))`, [perMs]);
    expect(await driver.rateLimitList({ limit: null, after: '' })).toEqual([{ key: 'k', max: 2, perMs: 1000 }, { queue: 'r', max: 3, perMs }]);
    expect(await driver.rateLimitList({ limit: 5, after: 'key:k' })).toEqual([{ queue: 'r', max: 3, perMs }]);

    // Two starts used in the window, one never used.
    await sql(`INSERT INTO ${naming.rateStarts} (\`key\`, n, used_at) VALUES ('queue:r', 1, ?), ('queue:r', 2, ?), ('queue:r', 3, DEFAULT)`, [
      toMysqlInstant(now - MINUTE),
      toMysqlInstant(now - 2 * MINUTE),
    ]);
    const open = await driver.rateLimitStatus({ key: 'queue:r' });
    expect(open).toMatchObject({ max: 3, perMs, startsInWindow: 2, fullUntil: null });
    expect(open!.now.getTime()).toBeGreaterThanOrEqual(now);
    // All three used: full until the oldest leaves the window.
    await sql(`UPDATE ${naming.rateStarts} SET used_at = ? WHERE \`key\` = 'queue:r' AND n = 3`, [toMysqlInstant(now - 3 * MINUTE - 7)]);
    expect(await driver.rateLimitStatus({ key: 'queue:r' })).toMatchObject({ startsInWindow: 3, fullUntil: new Date(now - 3 * MINUTE - 7 + perMs) });
    // A start used a window ago or longer is free again.
    await sql(`UPDATE ${naming.rateStarts} SET used_at = UTC_TIMESTAMP(3) - INTERVAL 10 MINUTE WHERE \`key\` = 'queue:r' AND n = 3`);
    expect(await driver.rateLimitStatus({ key: 'queue:r' })).toMatchObject({ startsInWindow: 2, fullUntil: null });
    expect(await driver.rateLimitStatus({ key: 'key:none' })).toBeNull();
  });

  it('lists the audit log newest first with its JSON detail, and finds no other process’s finishes', async () => {
    for (const [i, detail] of [null, '{"reason":"🚀 launch"}', '{"n":3}'].entries()) {
      await sql(`INSERT INTO ${naming.audit} (at, actor, action, target, detail) VALUES (?, ?, 'job.cancel', ?, ?)`, [toMysqlInstant(now - i), `ops ☃`, `t${i}`, detail]);
    }
    expect(await driver.auditList({ limit: 2, action: null, before: null })).toEqual([
      { id: expect.any(Number), at: new Date(now - 2), actor: 'ops ☃', action: 'job.cancel', target: 't2', detail: { n: 3 } },
      { id: expect.any(Number), at: new Date(now - 1), actor: 'ops ☃', action: 'job.cancel', target: 't1', detail: { reason: '🚀 launch' } },
    ]);
    expect((await driver.auditList({ limit: 10, action: null, before: null })).at(-1)!.detail).toBeNull();
    let heard = 0;
    const subscription = await (driver as Pick<StoreDriver, 'subscribeFinishHints'>).subscribeFinishHints(() => (heard += 1));
    await job({ state: 'succeeded', finishedAt: now });
    await subscription.close();
    expect(heard).toBe(0);
  });

  it('reads schedules by id and in pages of creation order, ties by id; null for a page after an unknown schedule', async () => {
    const insert = (id: string, createdAt: number, timing: { cron?: string; intervalMs?: number }) =>
      sql(
        `INSERT INTO ${naming.schedules} (id, name, queue, payload, max_attempts, cron, timezone, interval_ms, anchor_at, no_overlap, next_fire_at, created_at, updated_at)
         VALUES (?, 'report', 'q', ?, 3, ?, ?, ?, ?, 1, ?, ?, ?)`,
        [
          id,
          JSON.stringify({ title: ASTRAL }),
          timing.cron ?? null,
          timing.cron ? 'Europe/Berlin' : null,
          timing.intervalMs ?? null,
          timing.intervalMs ? toMysqlInstant(createdAt + 1) : null,
          toMysqlInstant(createdAt + HOUR),
          toMysqlInstant(createdAt),
          toMysqlInstant(createdAt),
        ],
      );
    const t0 = now - HOUR;
    const ids = ['cccccccc-0000-7000-8000-000000000001', 'aaaaaaaa-0000-7000-8000-000000000001', 'bbbbbbbb-0000-7000-8000-000000000001', 'dddddddd-0000-7000-8000-000000000001'];
    await insert(ids[0]!, t0, { cron: '0 * * * *' });
    await insert(ids[1]!, t0 + 1, { intervalMs: 90_000 });
    await insert(ids[2]!, t0 + 1, { cron: '*/5 * * * *' });
    await insert(ids[3]!, t0 + 2, { intervalMs: 1_000 });

    const one = await driver.scheduleGet({ scheduleId: ids[1]! });
    expect(one).toMatchObject({ id: ids[1], payload: { title: ASTRAL }, recurrence: { kind: 'interval', everyMs: 90_000, anchorAt: new Date(t0 + 2) }, noOverlap: true, skippedTicks: 0 });
    expect(one!.createdAt).toEqual(new Date(t0 + 1));
    expect(await driver.scheduleGet({ scheduleId: ids[2]! })).toMatchObject({ recurrence: { kind: 'cron', cron: '*/5 * * * *', timezone: 'Europe/Berlin' } });
    expect(await driver.scheduleGet({ scheduleId: randomUUID() })).toBeNull();

    const order = [ids[0], ids[1], ids[2], ids[3]];
    expect((await driver.scheduleList({ limit: 10, after: null }))!.map((s) => s.id)).toEqual(order);
    expect((await driver.scheduleList({ limit: 2, after: ids[0]! }))!.map((s) => s.id)).toEqual([ids[1], ids[2]]);
    expect((await driver.scheduleList({ limit: 2, after: ids[1]! }))!.map((s) => s.id)).toEqual([ids[2], ids[3]]);
    expect(await driver.scheduleList({ limit: 2, after: ids[3]! })).toEqual([]);
    expect(await driver.scheduleList({ limit: 2, after: randomUUID() })).toBeNull();
  });

  it('reads an ancestor’s output through any number of generations, and nothing from a job that is not an ancestor', async () => {
    const grandparent = await job({ state: 'succeeded', finishedAt: now, output: JSON.stringify({ rows: ['𠜎'] }) });
    const parent = await job({ state: 'succeeded', finishedAt: now, output: null });
    const sibling = await job({ state: 'succeeded', finishedAt: now, output: '1' });
    const child = await job({ state: 'awaiting_parents' });
    await edge(parent, grandparent, true);
    await edge(child, parent, true);
    // A cycle through the edges cannot make the walk run forever.
    await edge(grandparent, child);
    expect(await driver.jobParentOutput({ jobId: child, ancestorId: grandparent })).toEqual({ found: true, output: { rows: ['𠜎'] } });
    expect(await driver.jobParentOutput({ jobId: child, ancestorId: parent })).toEqual({ found: false, output: undefined });
    expect(await driver.jobParentOutput({ jobId: child, ancestorId: sibling })).toEqual({ found: false, output: undefined });
  });
});
