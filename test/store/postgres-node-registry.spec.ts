import { describe, expect, it } from '@jest/globals';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';
import { nodes, type PlanNode } from '../support/postgres-plans.js';

useAdapterDataSource();

describe('PostgreSQL node registry', () => {
  it('lists and prunes through the (last_seen_at, id) index, stopping at the page or batch, with no sort or sequential scan', async () => {
    const texts: string[] = [];
    const store = freshStore({ onStatement: (text) => texts.push(text) });
    await store.migrate();
    await dataSource.query(
      `INSERT INTO ${store.naming.nodes} (id, host, pid, version, queues, concurrency, running, started_at, last_seen_at)
       SELECT 'node-' || i, 'host', i, '1.0.0', ARRAY['default'], 10, 0, now() - interval '2 days', now() - i * interval '1 minute'
       FROM generate_series(1, 5000) i`,
    );
    await dataSource.query(`ANALYZE ${store.naming.nodes}`);
    const page = await store.nodeList({ limit: 20 });
    expect(page.map((node) => node.id)).toEqual(Array.from({ length: 20 }, (_, i) => `node-${i + 1}`));
    const since = await store.nodeList({ seenSince: page[9]!.lastSeenAt, limit: 20 });
    expect(since).toHaveLength(10);
    expect(await store.nodePrune({ olderThanMs: 86_400_000, limit: 100 })).toBe(100);

    const [all, seenSince] = texts.filter((text) => text.includes('ORDER BY last_seen_at DESC, id DESC'));
    const prune = texts.find((text) => text.startsWith(`DELETE FROM ${store.naming.nodes}`));
    const explain = async (text: string, values: unknown[]): Promise<PlanNode> =>
      ((await dataSource.query(`EXPLAIN (FORMAT JSON) ${text}`, values))[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
    const plans = [await explain(all!, [20]), await explain(seenSince!, [20, page[9]!.lastSeenAt]), await explain(prune!, [86_400_000, 100])];
    for (const plan of plans) {
      const scans = nodes(plan)
        .filter((node) => node['Relation Name'] === 'nodes' && node['Node Type'] !== 'ModifyTable')
        .map((node) => `${node['Node Type']} ${node['Index Name'] ?? ''}`.trim());
      expect(scans).toContain('Index Scan nodes_seen_idx');
      expect(nodes(plan).filter((node) => node['Node Type'] === 'Sort' || node['Node Type'] === 'Seq Scan')).toEqual([]);
    }
  });
});
