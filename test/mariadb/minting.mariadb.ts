import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { MINT_PLAN_MAX_MINTS, OccurrenceId } from '../../lib/core/index.js';
import type { MintResult, MysqlJobStore, Schedule } from '../../lib/store/index.js';
import { openMariadbNodes, type MariadbNode } from '../support/mariadb-nodes.js';
import { openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

/*
 * Schedules minted by several nodes at once on one MariaDB installation: the PostgreSQL minting
 * spec on the MySQL store. Each node has its own DataSource and store (mariadb-nodes.ts); the due
 * schedules are shared out by FOR UPDATE SKIP LOCKED, and an occurrence's job id is derived from
 * its tick, so no occurrence is ever minted twice.
 */

let admin: DataSource;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  admin = await openMariadbDataSource({ poolSize: 2 });
});

afterAll(async () => {
  for (const close of closers) await close();
  await admin.destroy();
});

async function cluster(count: number, tag: string, onStatement?: (node: number, text: string) => void): Promise<MariadbNode[]> {
  const opened = await openMariadbNodes(count, uniquePrefix(tag), onStatement ? { onStatement } : {});
  closers.push(opened.close);
  return opened.nodes;
}

/** Moves every schedule `seconds` into the past, so that many of its ticks are due. */
const backdate = (store: MysqlJobStore, seconds: number) =>
  admin.query(`UPDATE ${store.naming.schedules} SET next_fire_at = next_fire_at - INTERVAL ? SECOND, anchor_at = anchor_at - INTERVAL ? SECOND`, [seconds, seconds]);

/** Passes until a pass finds nothing due, each pass handed to `seen`. */
async function mintUntilIdle(store: MysqlJobStore, limit: number, seen: (pass: MintResult) => void): Promise<void> {
  for (;;) {
    const pass = await store.scheduleMintDue({ limit });
    seen(pass);
    if (pass.minted.length === 0 && (pass.nextDueAt === null || pass.nextDueAt > pass.now)) return;
  }
}

describe('minting on MySQL (MariaDB) from four nodes at once', () => {
  it('produces exactly one job per occurrence', async () => {
    const nodes = await cluster(4, 'mint');
    const [first] = nodes as [MariadbNode];
    for (const name of ['mint.a', 'mint.b', 'mint.c']) await first.store.scheduleUpsert({ schedule: { name, everyMs: 1_000, misfireGraceMs: 3_600_000 } });
    // 120 ticks of each are due, all within the grace.
    await backdate(first.store, 120);

    const created: string[] = [];
    const seen: string[] = [];
    const derived: boolean[] = [];
    await Promise.all(
      nodes.map(({ store }) =>
        mintUntilIdle(store, 2, (pass) => {
          for (const m of pass.minted) {
            seen.push(m.jobId);
            if (m.created) created.push(m.jobId);
            derived.push(m.jobId === OccurrenceId.derive(m.scheduleId, m.scheduledFor));
          }
        }),
      ),
    );
    const rows = (await admin.query(
      `SELECT schedule_id, COUNT(*) AS jobs, COUNT(DISTINCT scheduled_for) AS ticks FROM ${first.store.naming.jobs} GROUP BY schedule_id ORDER BY schedule_id`,
    )) as { jobs: string; ticks: string }[];
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(Number(row.jobs)).toBe(Number(row.ticks));
      expect(Number(row.jobs)).toBeGreaterThanOrEqual(120);
    }
    expect(derived.every(Boolean)).toBe(true);
    expect(new Set(created).size).toBe(created.length);
    expect(created.length).toBe(rows.reduce((n, r) => n + Number(r.jobs), 0));
    expect(new Set(seen).size).toBe(created.length);
  }, 60_000);
});

describe('batch minting on MySQL (MariaDB)', () => {
  it('four nodes mint 400 due schedules in batches, each pass a fixed handful of round trips, with no occurrence twice', async () => {
    const sent: string[][] = [[], [], [], []];
    let recording = false;
    const nodes = await cluster(4, 'batch', (node, text) => {
      if (recording) sent[node]!.push(text);
    });
    const [first] = nodes as [MariadbNode];
    const { jobs, schedules } = first.store.naming;
    for (let i = 0; i < 400; i++) await first.store.scheduleUpsert({ schedule: { name: `batch.${i % 7}`, everyMs: 1_000, misfireGraceMs: 3_600_000 } });
    // 5 ticks due for each: 2,000 occurrences, more than one pass's work bound.
    await backdate(first.store, 5);

    recording = true;
    const created: string[] = [];
    const passes: number[] = [];
    await Promise.all(
      nodes.map(({ store }) =>
        mintUntilIdle(store, 1_000, (pass) => {
          if (pass.minted.length > 0) passes.push(pass.minted.length);
          for (const m of pass.minted) if (m.created) created.push(m.jobId);
        }),
      ),
    );
    recording = false;
    const [{ total, distinct }] = (await admin.query(`SELECT COUNT(*) AS total, COUNT(DISTINCT schedule_id, scheduled_for) AS \`distinct\` FROM ${jobs}`)) as {
      total: string;
      distinct: string;
    }[];
    expect(Number(total)).toBe(Number(distinct));
    expect(Number(total)).toBeGreaterThanOrEqual(2_000);
    expect(new Set(created).size).toBe(Number(total));
    // Every schedule was written back past its due ticks.
    expect(await admin.query(`SELECT id FROM ${schedules} WHERE next_fire_at <= UTC_TIMESTAMP(3) - INTERVAL 1 SECOND`)).toEqual([]);
    // Passes covered hundreds of schedules, yet each took the same few round trips whatever it
    // covered: the clock, the due schedules, their write-back in one query, the id check, the
    // jobs with their history, the next due instant, COMMIT.
    expect(Math.max(...passes)).toBeGreaterThan(100);
    const transactions = sent.flatMap((queries) => {
      const split: string[][] = [];
      for (const query of queries) {
        if (query.trimStart().startsWith('START TRANSACTION')) split.push([]);
        split.at(-1)?.push(query);
      }
      return split;
    });
    const minting = transactions.filter((queries) => queries.some((q) => q.trimStart().startsWith(`UPDATE ${schedules}`)));
    expect(minting.length).toBeGreaterThanOrEqual(passes.length);
    expect(Math.max(...minting.map((queries) => queries.length))).toBeLessThanOrEqual(7);
    expect(minting.every((queries) => queries.filter((q) => q.trimStart().startsWith(`UPDATE ${schedules}`)).length === 1)).toBe(true);
  }, 60_000);
});

describe('minting on MySQL (MariaDB) after ten years down', () => {
  it('finishes its transaction, and a pause from another node waits only for that transaction', async () => {
    let pause: Promise<Schedule> | undefined;
    let scheduleId = '';
    let operator: MysqlJobStore | undefined;
    const [minter, other] = await cluster(2, 'outage', (node, text) => {
      // The pass has locked the schedule row and planned it: the operator pauses from another node
      // now, while that lock is held, and must get through as soon as the pass commits.
      if (node === 0 && pause === undefined && scheduleId !== '' && /^UPDATE .*schedules.* SET/.test(text.trim())) pause = operator!.schedulePause({ scheduleId });
    });
    operator = other!.store;
    const { schedule } = await minter!.store.scheduleUpsert({ schedule: { name: 'outage.minute', cron: '* * * * *', misfireGraceMs: 86_400_000 } });
    await admin.query(`UPDATE ${minter!.store.naming.schedules} SET next_fire_at = next_fire_at - INTERVAL 10 YEAR, created_at = created_at - INTERVAL 10 YEAR`);
    scheduleId = schedule.id;

    const pass = await minter!.store.scheduleMintDue({ limit: 10 });
    expect(pause).toBeDefined();
    const paused = await pause!;
    // A day of minutes is within the grace: one plan mints 1,000 of them, the rest stay due.
    expect(pass.minted).toHaveLength(MINT_PLAN_MAX_MINTS);
    expect(pass.skipped).toEqual([{ scheduleId, count: 1_001, reason: 'missed', lowerBound: true }]);
    // The pause read the row after the pass committed (it waited for the row lock, no longer).
    expect(paused).toMatchObject({ state: 'paused', lastJobId: pass.minted.at(-1)!.jobId, skippedTicks: 1_001 });
    const [{ n }] = (await admin.query(`SELECT COUNT(*) AS n FROM ${minter!.store.naming.jobs}`)) as { n: string }[];
    expect(Number(n)).toBe(MINT_PLAN_MAX_MINTS);
    // No session is left holding a row of the installation: a lock taken without waiting gets every one.
    expect(await admin.query(`SELECT id FROM ${minter!.store.naming.schedules} FOR UPDATE NOWAIT`)).toEqual([{ id: scheduleId }]);
    expect(await admin.query(`SELECT COUNT(*) AS n FROM ${minter!.store.naming.jobs} FOR UPDATE NOWAIT`)).toEqual([{ n: String(MINT_PLAN_MAX_MINTS) }]);
    expect((await operator.scheduleGet({ scheduleId }))?.state).toBe('paused');
  }, 60_000);
});
