import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { InvalidArgumentError, PostgresJobStore, SqliteJobStore } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';

/** The typed error `build` throws, whose message is one sentence. */
function refused(build: () => unknown): InvalidArgumentError {
  let error: unknown;
  try {
    build();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect((error as Error).message).toMatch(/^[^\n]+\.$/);
  return error as InvalidArgumentError;
}

/** The typed, one-sentence message `build` throws. */
const refusal = (build: () => unknown): string => refused(build).message;

describe('store factories refuse options they do not take', () => {
  let dataSource: DataSource;
  beforeAll(async () => {
    dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await dataSource.initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
  });

  it('issue 35 item 7: MemoryJobStore refuses a misspelt option, naming the one it most likely meant', () => {
    expect(refusal(() => new MemoryJobStore({ historypolicy: 'off' } as never))).toBe(
      'historypolicy is not a known MemoryJobStore option (did you mean historyPolicy?); known options are clock, limits, historyPolicy, finish, probe, lifecycle, enforceUniqueKeys.',
    );
    expect(refusal(() => new MemoryJobStore([] as never))).toBe('options must be an object, got an array.');
  });

  it('issue 35 item 7: SqliteJobStore refuses a misspelt option before it creates a table', async () => {
    expect(refusal(() => new SqliteJobStore({ dataSource, tablePrefx: 'app_' } as never))).toMatch(/^tablePrefx is not a known SqliteJobStore option \(did you mean tablePrefix\?\)/);
    expect(refusal(() => new SqliteJobStore({ dataSource, busyTimeout: 5 } as never))).toMatch(/^busyTimeout is not a known SqliteJobStore option \(did you mean busyTimeoutMs\?\)/);
    expect(refusal(() => new SqliteJobStore(undefined as never))).toBe('SqliteJobStore options must be an object, got undefined.');
    expect(await dataSource.query("SELECT name FROM sqlite_master WHERE type = 'table'")).toEqual([]);
  });

  it('issue 36 item 4: every store refuses a finish mode other than keep or lean, naming the option, before it writes anything', async () => {
    const message = 'finish must be "keep" or "lean", got "sometimes".';
    const finishRefusal = (build: () => unknown) => {
      const error = refused(build);
      expect(error.argument).toBe('finish');
      return error.message;
    };
    expect(finishRefusal(() => new MemoryJobStore({ finish: 'sometimes' as never }))).toBe(message);
    expect(finishRefusal(() => new SqliteJobStore({ dataSource, finish: 'sometimes' as never }))).toBe(message);
    expect(await dataSource.query("SELECT name FROM sqlite_master WHERE type = 'table'")).toEqual([]);
    // Refused before the store builds anything on its DataSource: this stand-in has no pool to touch.
    const standIn = { options: { type: 'postgres' }, isInitialized: true };
    expect(finishRefusal(() => new PostgresJobStore({ dataSource: standIn as never, finish: 'sometimes' as never }))).toBe(message);
    expect(finishRefusal(() => new PostgresJobStore({ dataSource: standIn as never, finish: null as never }))).toBe('finish must be "keep" or "lean", got null.');
    expect(new MemoryJobStore({ finish: 'lean' }).finish).toBe('lean');
    expect(new MemoryJobStore().finish).toBe('keep');
  });

  it('issue 35 item 7: PostgresJobStore refuses a misspelt option before it reads its DataSource', () => {
    // The key is checked first, so no server is needed: the DataSource is never touched.
    expect(refusal(() => new PostgresJobStore({ dataSource: undefined, schemaName: 'jobs' } as never))).toMatch(/^schemaName is not a known PostgresJobStore option \(did you mean schema\?\)/);
    expect(refusal(() => new PostgresJobStore(null as never))).toBe('PostgresJobStore options must be an object, got null.');
  });
});
