import { afterAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { OccurrenceId } from '../../lib/core/index.js';
import { PostgresJobStore } from '../../lib/store/index.js';
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
      ids.push((await first!.scheduleUpsert({ name, everyMs: 1_000, misfireGraceMs: 3_600_000 })).schedule.id);
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
