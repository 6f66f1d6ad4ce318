import { afterAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { MINT_PLAN_MAX_MINTS, OccurrenceId } from '../../lib/core/index.js';
import { PostgresJobStore, type Schedule } from '../../lib/store/index.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

const schema = uniqueSchema('mint');
const dataSources: DataSource[] = [];
const stores: PostgresJobStore[] = [];

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await dropSchemas(dataSources[0]!, [schema]);
  await Promise.all(dataSources.map((d) => d.destroy()));
});

describe('minting on PostgreSQL from four nodes at once', () => {
  it('produces exactly one job per occurrence', async () => {
    // Four nodes: four DataSources, four pools, four stores on one schema.
    for (let i = 0; i < 4; i++) {
      const dataSource = await openPostgresDataSource(3);
      dataSources.push(dataSource);
      stores.push(new PostgresJobStore({ dataSource, schema }));
    }
    await Promise.all(stores.map((s) => s.migrate()));
    const [first] = stores;
    const ids: string[] = [];
    for (const name of ['mint.a', 'mint.b', 'mint.c']) {
      ids.push((await first!.scheduleUpsert({ schedule: { name, everyMs: 1_000, misfireGraceMs: 3_600_000 } })).schedule.id);
    }
    // Move the schedules 120 s into the past: 120 ticks each are due, all within the grace.
    await dataSources[0]!.query(
      `UPDATE "${schema}"."schedules" SET next_fire_at = next_fire_at - interval '120 seconds', anchor_at = anchor_at - interval '120 seconds'`,
    );

    const created: string[] = [];
    const seen: string[] = [];
    await Promise.all(
      stores.map(async (store) => {
        for (;;) {
          const pass = await store.scheduleMintDue({ limit: 2 });
          for (const m of pass.minted) {
            seen.push(m.jobId);
            if (m.created) created.push(m.jobId);
            expect(m.jobId).toBe(OccurrenceId.derive(m.scheduleId, m.scheduledFor));
          }
          if (pass.minted.length === 0 && (pass.nextDueAt === null || pass.nextDueAt > pass.now)) break;
        }
      }),
    );
    const rows = await dataSources[0]!.query(
      `SELECT schedule_id, count(*)::int AS jobs, count(DISTINCT scheduled_for)::int AS ticks FROM "${schema}"."jobs" GROUP BY schedule_id ORDER BY schedule_id`,
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row.jobs).toBe(row.ticks);
      expect(row.jobs).toBeGreaterThanOrEqual(120);
    }
    expect(new Set(created).size).toBe(created.length);
    expect(created.length).toBe(rows.reduce((n: number, r: { jobs: number }) => n + r.jobs, 0));
    expect(new Set(seen).size).toBe(created.length);
  });
});

describe('issue 24: batch minting on PostgreSQL', () => {
  it('four nodes mint 400 due schedules in batches, each pass a fixed handful of statements, with no occurrence twice', async () => {
    const batch = uniqueSchema('batch');
    const texts: string[][] = [];
    const nodes: PostgresJobStore[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        const dataSource = await openPostgresDataSource(2);
        dataSources.push(dataSource);
        const seen: string[] = [];
        texts.push(seen);
        nodes.push(new PostgresJobStore({ dataSource, schema: batch, onStatement: (text) => void seen.push(text) }));
      }
      stores.push(...nodes);
      await nodes[0]!.migrate();
      const ids: string[] = [];
      // Hourly, so no tick falls due while the nodes mint: with a tick a second, 400 schedules came
      // due faster than a loaded machine minted them, and the loop below never ended.
      for (let i = 0; i < 400; i++) ids.push((await nodes[0]!.scheduleUpsert({ schedule: { name: `batch.${i % 7}`, everyMs: 3_600_000, misfireGraceMs: 86_400_000 } })).schedule.id);
      // 5 ticks due for each: 2,000 occurrences, more than one pass's work bound.
      await dataSources[0]!.query(`UPDATE "${batch}"."schedules" SET next_fire_at = next_fire_at - interval '5 hours', anchor_at = anchor_at - interval '5 hours'`);
      for (const seen of texts) seen.length = 0;

      const created: string[] = [];
      const passes: number[] = [];
      await Promise.all(
        nodes.map(async (store) => {
          for (;;) {
            const pass = await store.scheduleMintDue({ limit: 1_000 });
            if (pass.minted.length > 0) passes.push(pass.minted.length);
            for (const m of pass.minted) if (m.created) created.push(m.jobId);
            if (pass.minted.length === 0 && (pass.nextDueAt === null || pass.nextDueAt > pass.now)) break;
          }
        }),
      );
      const [{ jobs, distinct }] = await dataSources[0]!.query(`SELECT count(*)::int AS jobs, count(DISTINCT (schedule_id, scheduled_for))::int AS distinct FROM "${batch}"."jobs"`);
      expect(jobs).toBe(distinct);
      expect(jobs).toBe(2_000);
      expect(new Set(created).size).toBe(jobs);
      // Every schedule was written back past its due ticks.
      const [{ behind }] = await dataSources[0]!.query(`SELECT count(*)::int AS behind FROM "${batch}"."schedules" WHERE next_fire_at <= now() - interval '1 second'`);
      expect(behind).toBe(0);
      // Passes covered hundreds of schedules, yet no pass updated a schedule by itself: each
      // wrote its schedules back in one statement.
      expect(Math.max(...passes)).toBeGreaterThan(100);
      const updates = texts.flat().filter((t) => /^UPDATE .*schedules/.test(t.trim()));
      expect(updates.every((t) => t.includes('unnest('))).toBe(true);
      const work = texts.flat().filter((t) => !/^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/i.test(t));
      const passCount = texts.flat().filter((t) => /FOR UPDATE SKIP LOCKED/.test(t) && /schedules/.test(t)).length;
      expect(work.length).toBeLessThanOrEqual(passCount * 6);
    } finally {
      await dropSchemas(dataSources[0]!, [batch]);
    }
  }, 60_000);
});

describe('issue 19 item 1: minting on PostgreSQL after ten years down', () => {
  it('finishes its transaction, and a pause from another node waits only for that transaction', async () => {
    const outage = uniqueSchema('outage');
    let pause: Promise<Schedule> | undefined;
    const minterSource = await openPostgresDataSource(2);
    const operatorSource = await openPostgresDataSource(2);
    dataSources.push(minterSource, operatorSource);
    const operator = new PostgresJobStore({ dataSource: operatorSource, schema: outage });
    let scheduleId = '';
    const minter = new PostgresJobStore({
      dataSource: minterSource,
      schema: outage,
      onStatement: (text) => {
        // The pass has locked the schedule row and planned it: the operator pauses from another
        // node now, while that lock is held, and must get through as soon as the pass commits.
        if (pause === undefined && /^UPDATE .*schedules.* SET/.test(text.trim())) pause = operator.schedulePause({ scheduleId });
      },
    });
    stores.push(minter, operator);
    await minter.migrate();
    try {
      ({ schedule: { id: scheduleId } } = await minter.scheduleUpsert({ schedule: { name: 'outage.minute', cron: '* * * * *', misfireGraceMs: 86_400_000 } }));
      await minterSource.query(`UPDATE "${outage}"."schedules" SET next_fire_at = next_fire_at - interval '10 years', created_at = created_at - interval '10 years'`);

      const pass = await minter.scheduleMintDue({ limit: 10 });
      expect(pause).toBeDefined();
      const paused = await pause!;
      // A day of minutes is within the grace: one plan mints 1,000 of them, the rest stay due.
      expect(pass.minted).toHaveLength(MINT_PLAN_MAX_MINTS);
      expect(pass.skipped).toEqual([{ scheduleId, count: 1_001, reason: 'missed', lowerBound: true }]);
      // The pause read the row after the pass committed (it waited for the row lock, no longer).
      expect(paused).toMatchObject({ state: 'paused', lastJobId: pass.minted.at(-1)!.jobId, skippedTicks: 1_001 });
      const [{ jobs }] = await minterSource.query(`SELECT count(*)::int AS jobs FROM "${outage}"."jobs"`);
      expect(jobs).toBe(MINT_PLAN_MAX_MINTS);
      // Nothing of this schema is left idle in a transaction.
      const idle = await minterSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'idle in transaction' AND query LIKE $1`, [`%${outage}%`]);
      expect(idle[0].n).toBe(0);
      expect((await operator.scheduleGet({ scheduleId }))?.state).toBe('paused');
    } finally {
      await dropSchemas(minterSource, [outage]);
    }
  }, 60_000);
});
