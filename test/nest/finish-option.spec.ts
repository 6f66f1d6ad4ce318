import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { MemoryJobStore } from '../../lib/testing/index.js';
import { checkExplicitStore } from '../../lib/nest/scheduler-options.check.js';
import { createStore } from '../../lib/nest/scheduler-store.provider.js';

describe('issue 36 item 4: the module option finish', () => {
  let dataSource: DataSource;
  beforeAll(async () => {
    dataSource = await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
  });

  it('issue 36 item 4: reaches the store the module builds on the DataSource, keep by default', () => {
    expect(createStore({ finish: 'lean' }, dataSource).finish).toBe('lean');
    expect(createStore({}, dataSource).finish).toBe('keep');
  });

  it('issue 36 item 4: beside a store passed in, is accepted when it says what that store does', () => {
    expect(() => checkExplicitStore({ finish: 'lean' }, new MemoryJobStore({ finish: 'lean' }))).not.toThrow();
    expect(() => checkExplicitStore({ finish: 'keep' }, new MemoryJobStore({ finish: 'lean' }))).toThrow(
      'finish shapes the store the module builds, but a store was passed in; set finish on that store instead.',
    );
  });
});
