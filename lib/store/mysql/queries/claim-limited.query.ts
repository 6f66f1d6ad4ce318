import type { CheckedClaimParams } from '../../checked/store-params.js';
import type { JobRow } from '../../job-row.js';
import { fairOrder, groupLane, type GroupTurns, isGroupLane, laneShare, LANES_PER_CLAIM, shareCut } from '../../group-turns.js';
import { limitKeysOf, pickWithinLimits } from '../../limit-room.js';
import type { LockedJob } from '../mysql-effects.js';
import type { MysqlStatement } from '../mysql-executor.js';
import { LimitRoom } from '../mysql-limits.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { fromMysqlRow, JOB_COLUMNS, type MysqlJobRow } from '../mysql-row.js';
import type { MysqlTransaction } from '../mysql-transaction.js';
import { lockMoreCandidates } from './claim-jobs.query.js';
import { laneOrder, parkedLanes } from './parked-lanes.query.js';

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
 *
 * Groups' lanes are read with the others, each for its share of the batch, at most
 * LANES_PER_CLAIM lanes from the one after the lane `turns` kept, and the candidates are taken in
 * fair order (group-turns.ts). A grouped job read from the claim index and passed over is parked
 * in its group's lane.
 */
export async function claimLimited(
  tx: MysqlTransaction,
  t: MysqlNaming,
  params: CheckedClaimParams,
  now: number,
  first: readonly LockedJob[],
  turns: GroupTurns,
): Promise<LimitedClaim> {
  const room = new LimitRoom(tx, t, now, params.limit);
  const keysOf = (row: JobRow) => limitKeysOf(row.queue, row.concurrencyKey);
  const picked: LockedJob[] = [];
  const parked = new Map<string, number[]>();
  let held = false;
  let more = false;
  let window = params.limit;
  let fromWindow = [...first];
  const after = turns.laneAfter(params.queues);
  const { lanes, capped } = rotate(await parkedLanes(tx, t, params.queues, after), after);
  const passed = new Set<LockedJob>();
  let lastPick: LockedJob | undefined;
  let shared = false;
  let lastShared = false;
  const laneSeqs: number[] = [];
  // Candidates the share cut held back, from the window or a limit's lane: a later round reads on
  // past them, so they are carried into it (a group's lane is read again, and gives its own back).
  let carry: LockedJob[] = [];
  for (let round = 0; round < MAX_ROUNDS && picked.length < params.limit; round += 1) {
    const want = params.limit - picked.length;
    if (round > 0) {
      const last = [...fromWindow].reverse().find((c) => c.row.state === 'scheduled')?.row;
      fromWindow = last ? await lockMoreCandidates(tx, t, params, last, Math.max(window, want)) : [];
    }
    await room.load([...fromWindow.flatMap((c) => keysOf(c.row)), ...(round === 0 ? lanes.map((l) => l.key) : [])]);
    // Lanes in the first round, and groups' lanes again while one gave its whole share: a lane's
    // jobs this claim took stay due in the database until it commits, so a later read passes them by.
    const again: { queue: string; key: string }[] = round === 0 ? lanes : lastShared ? lanes.filter((lane) => isGroupLane(lane.key)) : [];
    const fromLanes = again.length > 0 ? await readLanes(tx, t, again, want, room, laneSeqs) : { rows: [], short: false, shared: false, cut: null };
    lastShared = fromLanes.shared;
    held ||= fromLanes.short;
    shared ||= fromLanes.shared;
    await room.load(fromLanes.rows.flatMap((c) => keysOf(c.row)));
    const cut = fromLanes.cut;
    const pool = [...carry, ...fromWindow, ...fromLanes.rows];
    const candidates = fairOrder(pool.filter((c) => cut === null || c.row.priority <= cut), (c) => c.row, lastPick ? (lastPick.row.groupKey ?? '') : turns.after(params.queues));
    const cutOff = new Set(cut === null ? [] : pool.filter((c) => c.row.priority > cut));
    const chosen = pickWithinLimits(candidates, (c) => keysOf(c.row), room.max, room.running, want, room.rateRoom, (c, key) => {
      held = true;
      passed.add(c);
      if (c.row.state === 'scheduled' && (!c.parked || isGroupLane((c as LaneJob).lane ?? ''))) parked.set(key, [...(parked.get(key) ?? []), c.row.seq]);
    });
    // A grouped job the batch had no turn for waits in its group's lane from now on.
    const taken = new Set(chosen);
    for (const c of [...carry, ...fromWindow]) {
      const group = c.row.groupKey;
      if (group !== null && c.row.state === 'scheduled' && !taken.has(c) && !passed.has(c) && !cutOff.has(c)) parked.set(groupLane(group), [...(parked.get(groupLane(group)) ?? []), c.row.seq]);
    }
    carry = [...cutOff].filter((c) => !isGroupLane((c as LaneJob).lane ?? ''));
    for (const job of chosen) room.used(keysOf(job.row));
    picked.push(...chosen);
    for (const c of chosen) laneSeqs.push(c.row.seq);
    lastPick = chosen.at(-1) ?? lastPick;
    more = (fromWindow.length >= Math.max(window, want) || lastShared || carry.length > 0) && chosen.length < want;
    if (!more) break;
    window = Math.min(window * WINDOW_GROWTH, MAX_WINDOW);
  }
  const fromLane = picked.findLast((c) => (c as LaneJob).lane !== undefined) as LaneJob | undefined;
  turns.record(params.queues, lastPick?.row, capped ? (fromLane ? { queue: fromLane.row.queue, key: fromLane.lane! } : lanes.at(-1)!) : null);
  // A group's lane that gave its share may hold more: claim again at once.
  if (shared && picked.length < params.limit) more = true;
  const statements: MysqlStatement[] = [...parked].map(([key, seqs]) => ({ sql: `UPDATE ${t.jobs} SET parked_key = ? WHERE seq IN (?)`, values: [key, seqs] }));
  statements.push(...room.stamps());
  return { picked, held, again: more && picked.length < params.limit, rateWakeMs: room.nextRateWake(), statements };
}

/** A job read from a lane, with the lane's key. */
type LaneJob = LockedJob & { readonly parked: boolean; readonly lane?: string };

/** Up to LANES_PER_CLAIM of `all` (in lane order), from the one after `after`, wrapping; `capped` when some were left out. */
function rotate<L extends { queue: string; key: string }>(all: readonly L[], after: { queue: string; key: string } | null): { lanes: L[]; capped: boolean } {
  // In the index's order, by bytes, as `all` is sorted: JavaScript's string order differs past U+FFFF.
  const at = after === null ? 0 : all.findIndex((l) => laneOrder(l, after) > 0);
  const from = at < 0 ? 0 : at;
  const lanes = [...all.slice(from), ...all.slice(0, from)].slice(0, LANES_PER_CLAIM);
  return { lanes, capped: all.length > LANES_PER_CLAIM };
}

/**
 * The first jobs of each lane with room, no more than its key's room (at most `want`), and of each
 * group's lane its share; `short` when a lane had less room than `want`; `shared` when a group's
 * lane gave its whole share, less than `want`.
 */
async function readLanes(tx: MysqlTransaction, t: MysqlNaming, lanes: readonly { queue: string; key: string }[], want: number, room: LimitRoom, read: readonly number[]) {
  const reads: { room: number; lane: string; group: boolean; statement: MysqlStatement }[] = [];
  let short = false;
  const share = laneShare(want, lanes.filter((lane) => isGroupLane(lane.key)).length);
  for (const lane of lanes) {
    const group = isGroupLane(lane.key);
    const n = group ? share : Math.min(room.roomOf(lane.key), want);
    if (!group) short ||= n < want;
    if (n <= 0) continue;
    reads.push({
      room: n,
      lane: lane.key,
      group,
      statement: {
        sql: `SELECT ${JOB_COLUMNS} FROM ${t.jobs} j
              WHERE state = 'scheduled' AND queue = ? AND parked_key = ? AND run_at <= @now AND attempt < max_attempts
                ${read.length > 0 ? 'AND seq NOT IN (?)' : ''}
              ORDER BY priority, run_at, seq LIMIT ? FOR UPDATE SKIP LOCKED`,
        values: read.length > 0 ? [lane.queue, lane.key, read, n] : [lane.queue, lane.key, n],
      },
    });
  }
  const results = (await tx.script(reads.map((r) => r.statement))) as MysqlJobRow[][];
  const rows = results.flatMap((found, i) => found.map((r) => ({ row: fromMysqlRow(r), openEdges: false, parked: true, lane: reads[i]!.lane }) as LaneJob));
  const shared = results.some((found, i) => reads[i]!.group && reads[i]!.room < want && found.length === reads[i]!.room);
  const cut = shareCut(results.flatMap((found, i) => (reads[i]!.group ? [{ share: reads[i]!.room, want, priorities: found.map((r) => r.priority) }] : [])));
  return { rows, short, shared, cut };
}
