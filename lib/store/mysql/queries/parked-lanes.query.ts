import { LANES_PER_CLAIM } from '../../group-turns.js';
import type { MysqlStatement } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import type { MysqlTransaction } from '../mysql-transaction.js';

/**
 * Lane probes of a chain in the first round trip (see {@link parkedLanes}): most claims see a few
 * lanes or none, and a probe past the last lane still costs the server a statement. A chain that
 * finds this many sends the rest of its probes in one more round trip.
 */
const FIRST_PROBES = 4;

/** A parked lane: the parked jobs of one queue under one limit or group key. */
export interface ParkedLane {
  readonly queue: string;
  readonly key: string;
}

/** The order of the lane index: queue, then key, by their bytes (the columns are binary). */
export function laneOrder(a: ParkedLane, b: ParkedLane): number {
  return Buffer.compare(Buffer.from(a.queue), Buffer.from(b.queue)) || Buffer.compare(Buffer.from(a.key), Buffer.from(b.key));
}

/**
 * The lanes of the listed, unpaused `queues` that the limited claim (claim-limited.query.ts) needs
 * to pick its LANES_PER_CLAIM lanes from the one after `after`, wrapping; in {@link laneOrder}.
 * They are found by a loose scan of the lane index (state, queue, parked_key, ...): one probe per
 * lane, however many jobs each holds. (A `SELECT DISTINCT` would read every parked job: the
 * optimizer reads the index for group-by only on fresh statistics.)
 *
 * Each queue gives its first LANES_PER_CLAIM + 1 lanes, and `after`'s queue as many more after
 * `after`: enough for the first LANES_PER_CLAIM from `after`, and to tell whether more lanes than
 * that exist. A chain of probes runs in the server, in at most two round trips, each probe seeking
 * past the key the one before found, held in a session variable: the server seeks a range only from
 * a value it holds as a constant, which neither a correlated column (a recursive CTE) nor a variable
 * the same statement assigns is. Each probe is a `SELECT … INTO`, as the claim's other reads into
 * variables: MariaDB runs the subquery of a `SET @v = (SELECT …)` as a locking read, and claimers
 * racing for a lane's first job deadlocked on it.
 */
export async function parkedLanes(tx: MysqlTransaction, t: MysqlNaming, queues: readonly string[], after: ParkedLane | null): Promise<ParkedLane[]> {
  const chains = queues.map((queue) => ({ queue, from: '' as string | null, left: LANES_PER_CLAIM + 1 }));
  if (after !== null && queues.includes(after.queue)) chains.push({ queue: after.queue, from: after.key, left: LANES_PER_CLAIM + 1 });
  const found = new Map<string, ParkedLane>();
  for (let first = true; ; first = false) {
    const going = chains.filter((chain) => chain.from !== null && chain.left > 0);
    if (going.length === 0) break;
    const statements: MysqlStatement[] = [];
    const read: string[] = [];
    const probes: { chain: (typeof chains)[number]; column: string }[] = [];
    going.forEach((chain, c) => {
      const at = (i: number) => `@scheduler_lane_${c}_${i}`;
      const count = first ? Math.min(FIRST_PROBES, chain.left) : chain.left;
      // A paused queue's chain starts from NULL, which no key follows; a probe that finds nothing leaves its NULL.
      const start = first ? 'IF(FIND_IN_SET(?, @paused) = 0, CAST(? AS BINARY), NULL)' : 'CAST(? AS BINARY)';
      const nulls = Array.from({ length: count }, (_, i) => `, ${at(i + 1)} = NULL`).join('');
      statements.push({ sql: `SET ${at(0)} = ${start}${nulls}`, values: first ? [chain.queue, chain.from] : [chain.from] });
      for (let i = 1; i <= count; i += 1) {
        statements.push({
          sql: `SELECT j.parked_key INTO ${at(i)} FROM ${t.jobs} j FORCE INDEX (jobs_lane_idx)
                 WHERE j.state = 'scheduled' AND j.queue = ? AND j.parked_key > ${at(i - 1)} ORDER BY j.parked_key LIMIT 1`,
          values: [chain.queue],
        });
        read.push(`${at(i)} AS \`${c}_${i}\``);
        probes.push({ chain, column: `${c}_${i}` });
      }
      chain.left -= count;
    });
    statements.push({ sql: `SELECT ${read.join(', ')}` });
    const results = await tx.script(statements);
    // A variable holding bytes comes back as a Buffer, which the store's cast does not read as text.
    const keys = (results.at(-1) as Record<string, Buffer | string | null>[])[0]!;
    const ended = new Set<object>();
    for (const { chain, column } of probes) {
      if (ended.has(chain)) continue;
      const value = keys[column] ?? null;
      const key = Buffer.isBuffer(value) ? value.toString('utf8') : value;
      chain.from = key;
      if (key === null) ended.add(chain);
      else found.set(`${chain.queue}\u0000${key}`, { queue: chain.queue, key });
    }
  }
  return [...found.values()].sort(laneOrder);
}
