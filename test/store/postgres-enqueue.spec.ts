import { describe, expect, it } from '@jest/globals';
import { PostgresJobStore } from '../../lib/store/index.js';
import { openPostgresDataSource, uniqueSchema } from '../support/postgres.js';
import { freshStore, schemas, useAdapterDataSource } from '../support/postgres-adapter.js';

useAdapterDataSource();

describe('PostgreSQL enqueue', () => {
  it('inserts a batch of generated ids without checking for existing ones, and still skips an existing caller-chosen id', async () => {
    const statements: string[] = [];
    const store = freshStore({ onStatement: (text) => statements.push(text) });
    await store.migrate();
    statements.length = 0;
    const generated = await store.jobEnqueueMany({ jobs: [{ name: 'a', payload: 1 }, { name: 'a', payload: 2 }] });
    expect(generated.map((r) => r.created)).toEqual([true, true]);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/INSERT INTO \S+jobs/);
    expect(statements[0]).not.toMatch(/ON CONFLICT \(id\)/);
    statements.length = 0;
    const mixed = await store.jobEnqueueMany({ jobs: [{ name: 'a', payload: 3 }, { name: 'a', payload: 4, id: generated[0]!.id }] });
    expect(statements[0]).toMatch(/ON CONFLICT \(id\) DO NOTHING/);
    expect(mixed.map((r) => r.created)).toEqual([true, false]);
    expect((await store.jobGet({ jobId: generated[0]!.id }))?.payload).toBe(1);
  });

  it('plans its enqueue statement once for batches of every size, instead of once per enqueue', async () => {
    // One connection, so its prepared statements are the store's.
    const single = await openPostgresDataSource(1);
    const schema = uniqueSchema('pga');
    schemas.push(schema);
    const texts: string[] = [];
    const store = new PostgresJobStore({ dataSource: single, schema, onStatement: (text) => texts.push(text) });
    try {
      await store.migrate();
      texts.length = 0;
      const sizes = [1, 1, 1, 1, 1, 1, 1, 10, 11, 50, 1, 1_000, 1];
      for (const size of sizes) await store.jobEnqueueMany({ jobs: Array.from({ length: size }, (_, k) => ({ name: 'a', payload: k })) });
      const enqueue = texts[0]!;
      expect(new Set(texts)).toEqual(new Set([enqueue]));
      // PostgreSQL tries five custom plans, then keeps the generic one whatever the batch size (it
      // had planned every batch of one to a few dozen jobs anew).
      const [plans] = await single.query(`SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE statement = $1`, [enqueue]);
      expect(plans).toEqual({ generic: sizes.length - 5, custom: 5 });
      const [{ n }] = await single.query(`SELECT count(*)::int AS n FROM "${schema}".jobs`);
      expect(n).toBe(sizes.reduce((a, b) => a + b, 0));
    } finally {
      await store.close();
      await single.destroy();
    }
  });
});
