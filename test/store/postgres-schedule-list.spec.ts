import { describe, expect, it } from '@jest/globals';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';
import { nodes, type PlanNode } from '../support/postgres-plans.js';

useAdapterDataSource();

describe('PostgreSQL schedule pages', () => {
  it('read (created_at, id) in order and stop at the page size, first page and the pages after', async () => {
    const texts: string[] = [];
    const store = freshStore({ onStatement: (text) => texts.push(text) });
    await store.migrate();
    await dataSource.query(
      `INSERT INTO ${store.naming.schedules} (id, name, queue, payload, max_attempts, interval_ms, anchor_at, next_fire_at, created_at)
       SELECT gen_random_uuid(), 'tick.' || i, 'default', '{}', 3, 60000, now(), now() + interval '1 minute', now() - i * interval '1 second'
       FROM generate_series(1, 5000) i`,
    );
    await dataSource.query(`ANALYZE ${store.naming.schedules}`);
    const first = await store.scheduleList({ limit: 20 });
    const second = await store.scheduleList({ limit: 20, after: first.at(-1)!.id });
    expect(second).toHaveLength(20);
    expect(second[0]!.createdAt.getTime()).toBeGreaterThanOrEqual(first.at(-1)!.createdAt.getTime());
    const [firstText, afterText] = texts.filter((text) => text.includes('ORDER BY created_at, id'));
    const explain = async (text: string, values: unknown[]): Promise<PlanNode> =>
      ((await dataSource.query(`EXPLAIN (FORMAT JSON) ${text}`, values))[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
    for (const plan of [await explain(firstText!, [20]), await explain(afterText!, [20, first.at(-1)!.id])]) {
      const scans = nodes(plan).filter((node) => node['Relation Name'] === 'schedules').map((node) => `${node['Node Type']} ${node['Index Name'] ?? ''}`.trim());
      expect(scans).toContain('Index Scan schedules_created_idx');
      expect(nodes(plan).filter((node) => node['Node Type'] === 'Sort' || node['Node Type'] === 'Seq Scan')).toEqual([]);
    }
  });
});
