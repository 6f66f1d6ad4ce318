import type { CheckedClaimParams } from '../../checked/store-params.js';
import { claimOrder, type JobRow } from '../../job-row.js';
import { limitKeysOf, pickWithinLimits } from '../../limit-room.js';
import type { LockedJob } from '../mysql-effects.js';
import type { MysqlStatement } from '../mysql-executor.js';
import { LimitRoom } from '../mysql-limits.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { fromMysqlRow, JOB_COLUMNS, type MysqlJobRow } from '../mysql-row.js';
import type { MysqlTransaction } from '../mysql-transaction.js';
import { lockMoreCandidates } from './claim-jobs.query.js';

/**
 * A window that held back so many jobs that the batch is not full is read again, wider each round
 * (past the jobs it held back, which it parks), up to MAX_WINDOW and MAX_ROUNDS rounds; a longer
 * backlog is parked over several claims, and the claim that stopped short asks for another at once.
 */
const WINDOW_GROWTH = 4;
const MAX_WINDOW = 4_096;
const MAX_ROUNDS = 6;

/** What the limited claim picked, and what it tells its store besides. */
export interface LimitedClaim {
  readonly picked: LockedJob[];
  /** Held-back jobs exist (held-wake.ts). */
  readonly held: boolean;
  /** It stopped short of a backlog it was parking: claim again now. */
  readonly again: boolean;
  /** When the next start of a rate limit it met frees (rate-wake.ts). */
  readonly rateWakeMs: number | null;
  /** The parking of what it passed over, and the rate starts its picks use. */
  readonly statements: MysqlStatement[];
}

/**
 * The claim while a concurrency or rate limit exists, or held-back jobs wait (as the SQLite
 * store's claim-limited.query.ts, on row locks instead of one writer): the candidates the claim
 * locked, the first jobs of each lane whose key has room, and more of the claim index while the
 * window held jobs back, picked in claim order within the room each limit leaves (mysql-limits.ts).
 * A due job passed over for a limit is parked in that key's lane (`parked_key`), so no later
 * claim walks it: it leaves the claim index, and comes back through its lane, in claim order,
 * when its key has room. A lane is a queue's parked jobs under one key.
 */
export async function claimLimited(tx: MysqlTransaction, t: MysqlNaming, params: CheckedClaimParams, now: number, first: readonly LockedJob[]): Promise<LimitedClaim> {
  const room = new LimitRoom(tx, t, now, params.limit);
  const keysOf = (row: JobRow) => limitKeysOf(row.queue, row.concurrencyKey);
  const picked: LockedJob[] = [];
  const parked = new Map<string, number[]>();
  let held = false;
  let more = false;
  let window = params.limit;
  let fromWindow = [...first];
  const lanes = await tx.query<{ queue: string; key: string }>(
    `SELECT DISTINCT queue, parked_key AS \`key\` FROM ${t.jobs}
     WHERE state = 'scheduled' AND queue IN (?) AND parked_key IS NOT NULL AND FIND_IN_SET(queue, @paused) = 0`,
    [params.queues],
  );
  for (let round = 0; round < MAX_ROUNDS && picked.length < params.limit; round += 1) {
    const want = params.limit - picked.length;
    if (round > 0) {
      const last = [...fromWindow].reverse().find((c) => c.row.state === 'scheduled')?.row;
      fromWindow = last ? await lockMoreCandidates(tx, t, params, last, Math.max(window, want)) : [];
    }
    await room.load([...fromWindow.flatMap((c) => keysOf(c.row)), ...(round === 0 ? lanes.map((l) => l.key) : [])]);
    // Lanes once, in the first round: a lane's jobs this claim locked stay due in the database until it commits.
    const fromLanes = round === 0 ? await readLanes(tx, t, lanes, want, room) : { rows: [], short: false };
    held ||= fromLanes.short;
    await room.load(fromLanes.rows.flatMap((c) => keysOf(c.row)));
    const candidates = [...fromWindow, ...fromLanes.rows].sort((a, b) => claimOrder(a.row, b.row));
    const chosen = pickWithinLimits(candidates, (c) => keysOf(c.row), room.max, room.running, want, room.rateRoom, (c, key) => {
      held = true;
      if (c.row.state === 'scheduled' && !c.parked) parked.set(key, [...(parked.get(key) ?? []), c.row.seq]);
    });
    for (const job of chosen) room.used(keysOf(job.row));
    picked.push(...chosen);
    more = fromWindow.length >= Math.max(window, want) && chosen.length < want;
    if (!more) break;
    window = Math.min(window * WINDOW_GROWTH, MAX_WINDOW);
  }
  const statements: MysqlStatement[] = [...parked].map(([key, seqs]) => ({ sql: `UPDATE ${t.jobs} SET parked_key = ? WHERE seq IN (?)`, values: [key, seqs] }));
  statements.push(...room.stamps());
  return { picked, held, again: more && picked.length < params.limit, rateWakeMs: room.nextRateWake(), statements };
}

/** The first jobs of each lane with room, no more than its key's room (at most `want`); `short` when a lane had less room than that. */
async function readLanes(tx: MysqlTransaction, t: MysqlNaming, lanes: readonly { queue: string; key: string }[], want: number, room: LimitRoom) {
  const reads: { room: number; statement: MysqlStatement }[] = [];
  let short = false;
  for (const lane of lanes) {
    const n = Math.min(room.roomOf(lane.key), want);
    short ||= n < want;
    if (n <= 0) continue;
    reads.push({
      room: n,
      statement: {
        sql: `SELECT ${JOB_COLUMNS} FROM ${t.jobs} j
              WHERE state = 'scheduled' AND queue = ? AND parked_key = ? AND run_at <= @now AND attempt < max_attempts
              ORDER BY priority, run_at, seq LIMIT ? FOR UPDATE SKIP LOCKED`,
        values: [lane.queue, lane.key, n],
      },
    });
  }
  const results = (await tx.script(reads.map((r) => r.statement))) as MysqlJobRow[][];
  const rows = results.flat().map((r) => ({ row: fromMysqlRow(r), openEdges: false, parked: true }) as LockedJob & { parked: boolean });
  return { rows, short };
}
