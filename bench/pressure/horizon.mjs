// Sessions that hold back vacuum's horizon in the system's database (a session in another database
// would not: the horizon of an ordinary table only counts backends of its own database).
import { setTimeout as wait } from 'node:timers/promises';
import pg from 'pg';
import { now } from '../peers/cell.mjs';

async function connect(url) {
  const client = new pg.Client(url);
  client.on('error', () => {});
  await client.connect();
  return client;
}

/**
 * One session that takes an xid and goes idle in its transaction (`BEGIN; SELECT txid_current();`):
 * nothing deleted or updated after it began can be vacuumed away until `end()` commits.
 */
export async function holdXid(url) {
  const client = await connect(url);
  await client.query('BEGIN');
  const xid = (await client.query('SELECT txid_current()::text AS xid')).rows[0].xid;
  return {
    end: async () => {
      await client.query('COMMIT');
      await client.end();
      return { xid };
    },
  };
}

/**
 * `count` sessions, each looping `BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM
 * <table>;` then idle `idleS` seconds, then COMMIT. Their starts are staggered by idleS / count, so
 * while one commits and takes a fresh snapshot the others still hold theirs: the horizon only moves
 * forward in steps, and is never more than about idleS seconds behind nor released.
 */
export function readers(url, table, { count = 4, idleS = 20 } = {}) {
  const stop = new AbortController();
  const pause = (ms) => wait(ms, undefined, { signal: stop.signal }).catch(() => {});
  const stats = { cycles: 0, slowestCountMs: 0, error: null };
  const reader = async (i) => {
    await pause((i * idleS * 1_000) / count);
    if (stop.signal.aborted) return;
    const client = await connect(url);
    try {
      while (!stop.signal.aborted) {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
        const t = now();
        await client.query(`SELECT count(*) FROM ${table}`);
        stats.slowestCountMs = Math.max(stats.slowestCountMs, now() - t);
        await pause(idleS * 1_000);
        await client.query('COMMIT');
        stats.cycles += 1;
      }
    } finally {
      await client.end();
    }
  };
  // A reader that fails is reported by end(), not as an unhandled rejection mid-phase.
  const loops = Array.from({ length: count }, (_, i) => reader(i).catch((error) => (stats.error ??= error.message)));
  return {
    /** Ends every reader's transaction (a count in progress finishes first). */
    end: async () => {
      stop.abort();
      await Promise.all(loops);
      return stats;
    },
  };
}
