import { claimOrder } from './job-row.js';

/**
 * Fair groups (docs/groups.md). A job may carry a group (a tenant). A grouped job that is due when
 * it is enqueued waits in its group's lane, the lane of held-back jobs whose key is `group:` and the
 * group, so a claim reads the groups that have due work one probe each and never walks a group's
 * backlog to reach another's. A claim then takes turns: within a priority, the first job of every
 * group with due work comes before the second job of any, and groups tie in turn from the one after
 * the group the store's last claim of these queues took last. Ungrouped jobs take their turns
 * together, as the group ''.
 */

/** The lane key of a group's due jobs. */
export const groupLane = (group: string): string => `group:${group}`;

/** Whether a lane key is a group's (not a limit key's). */
export const isGroupLane = (key: string): boolean => key.startsWith('group:');

/**
 * At most this many lanes are read by one claim. Lanes are read from the one after the lane the
 * last claim took from, wrapping, so with more lanes than this every lane still comes up in turn,
 * and a database with ten thousand tenants costs a claim a bounded number of probes.
 */
export const LANES_PER_CLAIM = 64;

/**
 * How many jobs a claim of `want` reads from each of `groupLanes` group lanes: an equal share,
 * rounded up, so one group's backlog cannot fill a batch that another group's job could join. A
 * claim that got less than it wanted because of the share says so, and the worker claims again.
 */
export const laneShare = (want: number, groupLanes: number): number => (groupLanes <= 1 ? want : Math.max(1, Math.ceil(want / groupLanes)));

/**
 * The most urgent priority a group's lane stopped at its share in (the priority of the last job it
 * gave), or null when none did: a candidate less urgent than that waits for another read, since
 * that lane may hold more jobs that come before it.
 */
export function shareCut(lanes: Iterable<{ readonly share: number; readonly want: number; readonly priorities: readonly number[] }>): number | null {
  let cut: number | null = null;
  for (const lane of lanes) {
    if (lane.share >= lane.want || lane.priorities.length < lane.share || lane.priorities.length === 0) continue;
    const last = Math.max(...lane.priorities);
    cut = cut === null ? last : Math.min(cut, last);
  }
  return cut;
}

/** The fields the fair order reads. */
export interface FairFields {
  readonly priority: number;
  readonly runAt: number;
  readonly seq: number;
  readonly groupKey: string | null;
}

/**
 * Orders a claim's candidates: by priority; within a priority, by turn (a job's place among its
 * group's candidates); within a turn, groups from the one after `after` (the group the last claim
 * took last, null when none), wrapping; then in claim order. Without grouped candidates this is
 * the claim order itself.
 */
export function fairOrder<T>(candidates: readonly T[], fieldsOf: (candidate: T) => FairFields, after: string | null): T[] {
  const sorted = [...candidates].sort((a, b) => claimOrder(fieldsOf(a), fieldsOf(b)));
  if (!sorted.some((candidate) => fieldsOf(candidate).groupKey !== null)) return sorted;
  const turn = new Map<T, number>();
  const taken = new Map<string, number>();
  for (const candidate of sorted) {
    const { priority, groupKey } = fieldsOf(candidate);
    const key = `${priority}\u0000${groupKey ?? ''}`;
    const n = (taken.get(key) ?? 0) + 1;
    taken.set(key, n);
    turn.set(candidate, n);
  }
  const lap = (group: string) => (after !== null && group <= after ? 1 : 0);
  return sorted.sort((a, b) => {
    const x = fieldsOf(a);
    const y = fieldsOf(b);
    const gx = x.groupKey ?? '';
    const gy = y.groupKey ?? '';
    return x.priority - y.priority || turn.get(a)! - turn.get(b)! || lap(gx) - lap(gy) || (gx < gy ? -1 : gx > gy ? 1 : 0) || claimOrder(x, y);
  });
}

interface Turn {
  group: string | null;
  lane: { readonly queue: string; readonly key: string } | null;
}

/**
 * Where the next claim of a queue list takes its turn from: the group its last claim took last, and
 * the lane to read lanes after. Kept per store instance, so each process rotates on its own; two
 * processes claiming at once each take turns, and together they still serve every group.
 */
export class GroupTurns {
  private readonly lists = new Map<string, Turn>();

  /** The group the last claim of `queues` took last ('' for an ungrouped job), or null. */
  after(queues: readonly string[]): string | null {
    return this.lists.get(listKey(queues))?.group ?? null;
  }

  /** The lane the next claim of `queues` reads lanes after, or null to read from the first. */
  laneAfter(queues: readonly string[]): { readonly queue: string; readonly key: string } | null {
    return this.lists.get(listKey(queues))?.lane ?? null;
  }

  /**
   * Records a claim: `last` the last job it took in fair order (nothing changes when it took none),
   * `lane` where the next claim reads lanes from (null once every lane was read).
   */
  record(queues: readonly string[], last: { readonly groupKey: string | null } | undefined, lane: { readonly queue: string; readonly key: string } | null): void {
    const key = listKey(queues);
    const turn = this.lists.get(key) ?? { group: null, lane: null };
    if (last !== undefined) turn.group = last.groupKey ?? '';
    turn.lane = lane;
    if (!this.lists.has(key)) {
      if (this.lists.size >= LISTS_KEPT) this.lists.delete(this.lists.keys().next().value!);
      this.lists.set(key, turn);
    }
  }
}

/** How many queue lists turns are kept for; a worker's list is fixed when it starts. */
const LISTS_KEPT = 32;

/** Queue names are checked (no NUL), so joining them keeps lists apart. */
const listKey = (queues: readonly string[]) => queues.join('\u0000');
