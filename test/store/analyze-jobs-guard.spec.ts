import { describe, expect, it } from '@jest/globals';
import type { PgExecutor } from '../../lib/store/postgres/pg-executor.js';
import { postgresNaming } from '../../lib/store/postgres/postgres-naming.js';
import { analyzeJobsGuard } from '../../lib/store/postgres/queries/analyze-jobs.query.js';

/** A database that answers the guard's look from `missing` (or fails it), recording each statement's first word. */
function fakeDb(answers: Array<boolean | 'fail'>) {
  const sent: string[] = [];
  const db = {
    async query(text: string) {
      sent.push(text.includes('pg_stats') ? 'look' : text.trim().split(/\s+/)[0]!);
      if (!text.includes('pg_stats')) return [];
      const answer = answers.shift();
      if (answer === 'fail') throw new Error('connection lost');
      return [{ missing: answer }];
    },
  } as unknown as PgExecutor;
  return { db, sent };
}

describe('analyzeJobsGuard', () => {
  it('looks at most once a minute until it sees statistics, analyzes only when they are missing, and then stops looking', async () => {
    let now = 0;
    const guard = analyzeJobsGuard(postgresNaming(), () => now);
    const { db, sent } = fakeDb(['fail', true]);
    expect(await guard.check(db)).toBe(false); // the look failed
    now = 59_999;
    expect(await guard.check(db)).toBe(false);
    expect(sent).toEqual(['look']);
    now = 60_000;
    expect(await guard.check(db)).toBe(true);
    expect(sent).toEqual(['look', 'look', 'ANALYZE']);
    now = 10 * 60_000;
    expect(await guard.check(db)).toBe(false);
    expect(sent).toEqual(['look', 'look', 'ANALYZE']);
  });

  it('stops looking once a look finds statistics, and shares one look between concurrent calls', async () => {
    let now = 0;
    const guard = analyzeJobsGuard(postgresNaming(), () => now);
    const { db, sent } = fakeDb([false]);
    const [a, b] = [guard.check(db), guard.check(db)];
    expect(await a).toBe(false);
    expect(await b).toBe(false);
    now = 10 * 60_000;
    expect(await guard.check(db)).toBe(false);
    expect(sent).toEqual(['look']);
  });
});
