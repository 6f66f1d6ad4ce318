import type { Rate } from '../enqueue-input.types.js';
import type { MysqlExecutor, MysqlStatement } from './mysql-executor.js';
import { fromMysqlInstant } from './mysql-instant.js';
import type { MysqlNaming } from './mysql-naming.js';
import { instantParam } from './mysql-row.js';

/**
 * Concurrency and rate limits on MySQL.
 *
 * A claim that may start jobs under a limit counts the jobs that run under the limit's key with a
 * live lease, while it holds the limit's row locked (FOR UPDATE), so claims of one key take turns
 * and each counts the jobs the one before it started; a job frees its room by no longer running
 * (an outcome) or by its lease lapsing, with no bookkeeping of its own. A lapsed lease frees room
 * only once the claim has locked its job, and a heartbeat reads the clock it renews by only after
 * locking the job (lock-jobs.query.ts): a heartbeat that began before a lease's deadline
 * cannot renew it once a claim has counted it lapsed. Rate limits keep one row per start
 * (rate-window.ts), taken under the rate limit's row lock. The claim itself, with its lanes of
 * held-back jobs, is queries/claim-limited.query.ts.
 *
 * The limits lock orders limit changes against claims: one row of the locks table that every
 * claim reads shared (in its first query, before it reads whether limits exist) and that setting
 * a limit, and putting into effect one declared at enqueue, lock exclusive. A claim therefore
 * either ends before a limit appears, or reads it.
 */

/**
 * The shared side of the limits lock, with what a claim needs to know: whether it must pick
 * within limits (any limit, or jobs a limit held back still parked) and whether a limit declared
 * at enqueue still waits to be put into effect.
 */
export const limitsGate = (t: MysqlNaming): MysqlStatement => ({
  sql: `SELECT (EXISTS (SELECT 1 FROM ${t.limits}) OR EXISTS (SELECT 1 FROM ${t.rateLimits})
                OR EXISTS (SELECT 1 FROM ${t.jobs} WHERE state = 'scheduled' AND parked_key IS NOT NULL)) AS limited,
               EXISTS (SELECT 1 FROM ${t.limits} WHERE pending = TRUE) AS pending
        FROM ${t.locks} WHERE space = 'limits' AND bucket = 0 LOCK IN SHARE MODE`,
});

/** The exclusive side of the limits lock, for the rest of the transaction. */
export const limitsLock = (t: MysqlNaming): MysqlStatement => ({ sql: `SELECT bucket FROM ${t.locks} WHERE space = 'limits' AND bucket = 0 FOR UPDATE` });

/** Puts limits declared at enqueue into effect, in a transaction of the store's own (waiting out the claims that began without them). */
export async function provisionPending(db: MysqlExecutor, t: MysqlNaming): Promise<void> {
  await db.script([limitsLock(t), { sql: `UPDATE ${t.limits} SET pending = FALSE, updated_at = UTC_TIMESTAMP(3) WHERE pending = TRUE` }]);
}

/**
 * The room under the limits a claim meets, loaded key by key as the claim meets them: each
 * limit's row locked (claims of one key take turns), the jobs running under each capped key with
 * a live lease, and each rate's free starts, longest unused first. Picks spend it as they go.
 */
export class LimitRoom {
  readonly max = new Map<string, number>();
  readonly running = new Map<string, number>();
  /** Free starts left per rate-limited key; `free` lists them, longest unused first. */
  readonly rateRoom = new Map<string, number>();
  private readonly free = new Map<string, number[]>();
  private readonly perMs = new Map<string, number>();
  /** Per rate-limited key, its oldest use still inside the window, if any. */
  private readonly oldestBusy = new Map<string, number | null>();
  private readonly loaded = new Set<string>();
  private readonly stamped = new Map<string, number>();

  constructor(
    private readonly db: MysqlExecutor,
    private readonly t: MysqlNaming,
    private readonly now: number,
    private readonly batch: number,
  ) {}

  /** Loads (and locks, in key order) the limits of `keys` not loaded yet. */
  async load(keys: Iterable<string>): Promise<void> {
    const fresh = [...new Set(keys)].filter((key) => !this.loaded.has(key)).sort();
    if (fresh.length === 0) return;
    for (const key of fresh) this.loaded.add(key);
    const t = this.t;
    const [caps, rates] = (await this.db.script([
      { sql: `SELECT \`key\`, max FROM ${t.limits} WHERE \`key\` IN (?) ORDER BY \`key\` FOR UPDATE`, values: [fresh] },
      { sql: `SELECT \`key\`, per_ms FROM ${t.rateLimits} WHERE \`key\` IN (?) ORDER BY \`key\` FOR UPDATE`, values: [fresh] },
    ])) as [{ key: string; max: number }[], { key: string; per_ms: number }[]];
    for (const cap of caps) this.max.set(cap.key, cap.max);
    for (const [key, n] of await countRunning(this.db, t, instantParam(this.now), caps.map((c) => c.key))) this.running.set(key, n);
    if (rates.length === 0) return;
    const windows = (await this.db.script(
      rates.flatMap((r) => {
        const since = instantParam(this.now - Number(r.per_ms));
        return [
          { sql: `SELECT n FROM ${t.rateStarts} WHERE \`key\` = ? AND used_at <= ? ORDER BY used_at, n LIMIT ?`, values: [r.key, since, this.batch] },
          { sql: `SELECT MIN(used_at) AS oldest FROM ${t.rateStarts} WHERE \`key\` = ? AND used_at > ?`, values: [r.key, since] },
        ];
      }),
    )) as unknown[];
    rates.forEach((r, i) => {
      const free = (windows[2 * i] as { n: number }[]).map((row) => row.n);
      const oldest = (windows[2 * i + 1] as { oldest: string | null }[])[0]?.oldest ?? null;
      this.free.set(r.key, free);
      this.rateRoom.set(r.key, free.length);
      this.perMs.set(r.key, Number(r.per_ms));
      this.oldestBusy.set(r.key, oldest === null ? null : fromMysqlInstant(oldest).getTime());
    });
  }

  /** How many more jobs `key` lets start now (Infinity when it has no limit). */
  roomOf(key: string): number {
    const cap = this.max.has(key) ? this.max.get(key)! - (this.running.get(key) ?? 0) : Number.POSITIVE_INFINITY;
    return Math.min(cap, this.rateRoom.get(key) ?? Number.POSITIVE_INFINITY);
  }

  /** Notes that a picked job takes one start of each rate-limited key it falls under. */
  used(keys: readonly string[]): void {
    for (const key of keys) if (this.free.has(key)) this.stamped.set(key, (this.stamped.get(key) ?? 0) + 1);
  }

  /** The starts the picks used, stamped with the claim's instant (the longest unused ones, as rate-window.ts useStart). */
  stamps(): MysqlStatement[] {
    return [...this.stamped].map(([key, n]) => ({
      sql: `UPDATE ${this.t.rateStarts} SET used_at = ? WHERE \`key\` = ? AND n IN (?)`,
      values: [instantParam(this.now), key, this.free.get(key)!.slice(0, n)],
    }));
  }

  /**
   * Milliseconds until the next start frees of any rate-limited key the claim met, after its own
   * stamps; null when none is in use. Every key met, held back or not: a claim that took a key's
   * last starts cannot tell whether more of its jobs wait, and later claims pass a spent key by.
   */
  nextRateWake(): number | null {
    let soonest: number | null = null;
    for (const [key, perMs] of this.perMs) {
      const busy = [this.oldestBusy.get(key) ?? null, this.stamped.has(key) ? this.now : null].filter((at): at is number => at !== null);
      if (busy.length === 0) continue;
      const frees = Math.max(Math.min(...busy) + perMs - this.now, 1);
      soonest = soonest === null ? frees : Math.min(soonest, frees);
    }
    return soonest;
  }
}

/**
 * Jobs running under each capped key (`queue:` or `key:`): those with a live lease, and those with a
 * lapsed one that this claim could not lock. The lapsed ones it locks (FOR UPDATE SKIP LOCKED:
 * MariaDB has no FOR SHARE, MySQL no SKIP LOCKED in share mode) stay locked until it commits.
 */
async function countRunning(db: MysqlExecutor, t: MysqlNaming, at: string | null, capped: readonly string[]): Promise<Map<string, number>> {
  const running = new Map<string, number>();
  const groups = [
    { column: 'queue', prefix: 'queue:', values: capped.filter((k) => k.startsWith('queue:')).map((k) => k.slice('queue:'.length)) },
    { column: 'concurrency_key', prefix: 'key:', values: capped.filter((k) => k.startsWith('key:')).map((k) => k.slice('key:'.length)) },
  ].filter((g) => g.values.length > 0);
  const statements: MysqlStatement[] = groups.flatMap(({ column, prefix, values }) => [
    {
      // One statement, so one read view: the live leases counted, and the lapsed ones listed.
      sql: `SELECT CONCAT('${prefix}', ${column}) AS \`key\`, COUNT(*) AS n, NULL AS id FROM ${t.jobs}
            WHERE state = 'running' AND ${column} IN (?) AND leased_until > ? GROUP BY ${column}
            UNION ALL
            SELECT CONCAT('${prefix}', ${column}), 0, id FROM ${t.jobs} WHERE state = 'running' AND ${column} IN (?) AND leased_until <= ?`,
      values: [values, at, values, at],
    },
    { sql: `SELECT id FROM ${t.jobs} WHERE state = 'running' AND ${column} IN (?) AND leased_until <= ? FOR UPDATE SKIP LOCKED`, values: [values, at] },
  ]);
  const results = (await db.script(statements)) as unknown[];
  for (let i = 0; i < results.length; i += 2) {
    const locked = new Set((results[i + 1] as { id: string }[]).map((r) => r.id));
    for (const r of results[i] as { key: string; n: number; id: string | null }[]) {
      // A lapsed lease frees its room only once this claim holds its job: a heartbeat that renews
      // it waits for this claim, and then finds it lapsed. One another transaction holds (its
      // renewal, or its outcome, in flight) still counts.
      const n = r.id === null ? Number(r.n) : locked.has(r.id) ? 0 : 1;
      running.set(r.key, (running.get(r.key) ?? 0) + n);
    }
  }
  return running;
}

/**
 * Sets or removes a concurrency limit under the limits lock; false when it already had that max,
 * or there was none to remove (then nothing is written, the audit entry included).
 */
export async function setConcurrencyLimit(db: MysqlExecutor, t: MysqlNaming, key: string, max: number | null): Promise<boolean> {
  const [, current] = (await db.script([limitsLock(t), { sql: `SELECT max, pending FROM ${t.limits} WHERE \`key\` = ? FOR UPDATE`, values: [key] }])) as [
    unknown,
    { max: number; pending: number }[],
  ];
  const had = current[0];
  if (max === null) {
    if (!had) return false;
    await db.run(`DELETE FROM ${t.limits} WHERE \`key\` = ?`, [key]);
    return true;
  }
  if (had && had.max === max) return false;
  await db.run(
    `INSERT INTO ${t.limits} (\`key\`, max, pending, updated_at) VALUES (?, ?, FALSE, UTC_TIMESTAMP(3))
     ON DUPLICATE KEY UPDATE max = VALUES(max), pending = FALSE, updated_at = VALUES(updated_at)`,
    [key, max],
  );
  return true;
}

/**
 * Sets, changes or removes a rate limit under the limits lock (rate-window.ts says how its starts
 * follow); false when it already had that rate, or there was none to remove.
 */
export async function setRateLimit(db: MysqlExecutor, t: MysqlNaming, key: string, rate: Rate | null): Promise<boolean> {
  const [, current] = (await db.script([limitsLock(t), { sql: `SELECT max, per_ms FROM ${t.rateLimits} WHERE \`key\` = ? FOR UPDATE`, values: [key] }])) as [
    unknown,
    { max: number; per_ms: number }[],
  ];
  const had = current[0];
  if (rate === null) {
    if (!had) return false;
    await db.script([
      { sql: `DELETE FROM ${t.rateLimits} WHERE \`key\` = ?`, values: [key] },
      { sql: `DELETE FROM ${t.rateStarts} WHERE \`key\` = ?`, values: [key] },
    ]);
    return true;
  }
  if (had && had.max === rate.max && Number(had.per_ms) === rate.perMs) return false;
  const starts = had ? await db.query<{ n: number }>(`SELECT n FROM ${t.rateStarts} WHERE \`key\` = ? ORDER BY used_at DESC, n`, [key]) : [];
  // A lowered max keeps the most recent starts; a raised one adds unused ones.
  const dropped = starts.slice(rate.max).map((s) => s.n);
  const top = starts.reduce((m, s) => Math.max(m, s.n), 0);
  const added = Array.from({ length: Math.max(0, rate.max - starts.length) }, (_, i) => top + i + 1);
  const statements: MysqlStatement[] = [
    {
      sql: `INSERT INTO ${t.rateLimits} (\`key\`, max, per_ms, updated_at) VALUES (?, ?, ?, UTC_TIMESTAMP(3))
            ON DUPLICATE KEY UPDATE max = VALUES(max), per_ms = VALUES(per_ms), updated_at = VALUES(updated_at)`,
      values: [key, rate.max, rate.perMs],
    },
  ];
  if (!had) statements.push({ sql: `DELETE FROM ${t.rateStarts} WHERE \`key\` = ?`, values: [key] });
  if (dropped.length > 0) statements.push({ sql: `DELETE FROM ${t.rateStarts} WHERE \`key\` = ? AND n IN (?)`, values: [key, dropped] });
  if (added.length > 0) {
    statements.push({ sql: `INSERT INTO ${t.rateStarts} (\`key\`, n) VALUES ${added.map(() => '(?, ?)').join(', ')}`, values: added.flatMap((n) => [key, n]) });
  }
  await db.script(statements);
  return true;
}
