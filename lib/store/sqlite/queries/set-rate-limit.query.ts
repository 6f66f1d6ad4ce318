import type { Database } from 'better-sqlite3';
import type { Rate } from '../../enqueue-input.types.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Sets, changes or (with null) removes the rate limit on `key`, inside the caller's write. A new
 * limit gets `max` unused start rows. A changed one keeps its most recent starts, up to the new max
 * (a row kept is never older than one dropped, so no later start shares a window with a dropped
 * one), and gets unused rows up to it; a new window applies to the starts it keeps. A rate the
 * limit already has, or a removal where there is none, writes nothing and answers false; the
 * caller's write transaction makes the test and the write one step.
 */
export function setRateLimitQuery(db: Database, t: SqliteNaming) {
  const current = db.prepare(`SELECT max, per_ms AS perMs FROM ${t.rateLimits} WHERE key = ?`);
  const upsert = db.prepare(
    `INSERT INTO ${t.rateLimits} (key, max, per_ms, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET max = excluded.max, per_ms = excluded.per_ms, updated_at = excluded.updated_at`,
  );
  const trim = db.prepare(
    `DELETE FROM ${t.rateStarts} WHERE key = @key AND n NOT IN (SELECT n FROM ${t.rateStarts} WHERE key = @key ORDER BY used_at IS NULL, used_at DESC, n LIMIT @max)`,
  );
  const pad = db.prepare(`
    WITH RECURSIVE have(c, top) AS (SELECT count(*), COALESCE(max(n), 0) FROM ${t.rateStarts} WHERE key = @key),
    added(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM added WHERE i < @max)
    INSERT INTO ${t.rateStarts} (key, n, used_at) SELECT @key, have.top + added.i, NULL FROM have, added WHERE added.i <= @max - have.c`);
  const drop = db.prepare(`DELETE FROM ${t.rateLimits} WHERE key = ?`);
  const dropStarts = db.prepare(`DELETE FROM ${t.rateStarts} WHERE key = ?`);
  const declare = db.prepare(`INSERT INTO ${t.rateLimits} (key, max, per_ms, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`);
  const audit = db.prepare(`INSERT INTO ${t.audit} (at, actor, action, target, detail) VALUES (?, 'enqueue', 'rate_limit.declare', ?, ?)`);

  return {
    /** Whether the limit changed. */
    set(key: string, rate: Rate | null, now: number): boolean {
      const held = current.get(key) as Rate | undefined;
      if (rate === null) {
        if (!held) return false;
        drop.run(key);
        dropStarts.run(key);
        return true;
      }
      if (held?.max === rate.max && held.perMs === rate.perMs) return false;
      if (!held) dropStarts.run(key);
      upsert.run(key, rate.max, rate.perMs, now);
      trim.run({ key, max: rate.max });
      pad.run({ key, max: rate.max });
      return true;
    },
    /** A rate declared at enqueue: written, and audited (verify reads it), only when the key has none. */
    declare(key: string, rate: Rate, now: number): void {
      if (declare.run(key, rate.max, rate.perMs, now).changes === 0) return;
      pad.run({ key, max: rate.max });
      audit.run(now, key, JSON.stringify({ rate: { max: rate.max, perMs: rate.perMs } }));
    },
  };
}
