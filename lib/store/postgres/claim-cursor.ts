import type { JobRow } from '../job-row.js';
import type { CheckedClaimParams } from '../checked/store-params.js';
import type { ClaimCursorValues } from './queries/claim-unlimited.query.js';

/**
 * Entries the claim that searches lapsed leases may read in the claim index beyond the jobs it took
 * before the claims after it read from a cursor. Passing a dead entry costs a heap check, about 0.2 µs: a thousand cost about
 * what the claim itself does.
 */
const WALK_ALLOWANCE = 1_000;

/**
 * How far behind the first job a claim took at a priority the cursor starts. Jobs commit in another
 * order than they were dated (`run_at` is their transaction's start), so a job that a transaction
 * shorter than this enqueued after a claim is still read by the next one. Each cursor claim passes
 * this much of its priority's recent claims again: at 800 jobs/s, some 200 entries; on a backlog
 * enqueued in bulk, a few thousand.
 */
const SLACK_MS = 250;

/**
 * While the cursor is used, one in this many of the claims asked to search lapsed leases does so,
 * and reads from the start: each walks every dead entry the held horizon kept, in the claim index
 * and in the lease index, a cost that grows with the hold. Measured at 800 jobs/s on 2 cores: with
 * one such claim per second the node fell behind seven minutes into a held xid, when those walks
 * took longer than the poll interval. The others read from the cursor and leave lapsed leases to
 * the next one.
 */
const FULL_EVERY = 10;

/** How many queue lists the cursors are kept for; a worker's list is fixed when it starts. */
const LISTS_KEPT = 32;

interface ListCursor {
  /** Whether the last claim that searched lapsed leases walked past many dead entries. */
  walking: boolean;
  /** Claims asked to search lapsed leases that read from the cursor instead, since the last that did. */
  deferred: number;
  /** Per priority, the run time (epoch ms) a cursor claim reads it from. */
  readonly from: Map<number, number>;
}

/**
 * Decides, claim by claim, whether the unlimited claim reads each priority from its start or from a
 * cursor (claim-cursor.sql.ts), and keeps the cursors: per queue list, where each priority's due
 * jobs begin, from the jobs the last claims took.
 *
 * The claim that also searches lapsed leases (one per poll interval) reads every priority from its
 * start and reports how many claim-index entries it passed (`walked`). One that passed many more
 * than it took tells that a transaction is holding back vacuum's horizon, and the claims after it
 * read from the cursor; the next such claim that passes few ends that. Until the walking is seen
 * every claim reads from the start, exactly as before, and the claims between poll ticks carry no
 * count. While the cursor is used, only one in {@link FULL_EVERY} of the claims asked to search
 * lapsed leases does, and reads from the start (every 10 s at the default poll interval): a job
 * that becomes due behind the cursor (a dependant its parents released, a job handed back at
 * shutdown, one enqueued by a transaction open for longer than {@link SLACK_MS}, a queue resumed, a
 * priority the cursor does not list yet), and a lapsed lease, wait for that claim, and none is lost.
 */
export class ClaimCursors {
  private readonly lists = new Map<string, ListCursor>();

  /**
   * How the next claim of `params` reads: `cursor` undefined to read every priority from its start,
   * and `params` as sent (a claim asked to search lapsed leases may be told not to, see
   * {@link FULL_EVERY}).
   */
  plan(params: CheckedClaimParams): { readonly params: CheckedClaimParams; readonly cursor?: ClaimCursorValues } {
    const list = this.lists.get(listKey(params.queues));
    if (list === undefined || !list.walking || list.from.size === 0) return { params };
    if (params.includeLapsed) {
      list.deferred += 1;
      if (list.deferred >= FULL_EVERY) {
        list.deferred = 0;
        return { params };
      }
    }
    const priorities = [...list.from.keys()].sort((a, b) => a - b);
    const cursor = { priorities, runAts: priorities.map((p) => new Date(list.from.get(p)!).toISOString()) };
    return { params: params.includeLapsed ? { ...params, includeLapsed: false } : params, cursor };
  }

  /** What a claim took, and, for one that searched lapsed leases, how many claim-index entries it read. */
  observe(params: CheckedClaimParams, rows: readonly JobRow[], walked: number | null): void {
    const key = listKey(params.queues);
    let list = this.lists.get(key);
    if (list === undefined) {
      if (this.lists.size >= LISTS_KEPT) this.lists.delete(this.lists.keys().next().value!);
      list = { walking: false, deferred: 0, from: new Map() };
      this.lists.set(key, list);
    }
    const first = new Map<number, number>();
    for (const row of rows) {
      const seen = first.get(row.priority);
      if (seen === undefined || row.runAt < seen) first.set(row.priority, row.runAt);
    }
    for (const [priority, runAt] of first) {
      const from = runAt - SLACK_MS;
      if (from > (list.from.get(priority) ?? -Infinity)) list.from.set(priority, from);
    }
    if (walked !== null) list.walking = walked - rows.length > WALK_ALLOWANCE;
  }

  /** Whether claims of `queues` read from a cursor now (for tests and telemetry). */
  walking(queues: readonly string[]): boolean {
    return this.lists.get(listKey(queues))?.walking === true;
  }
}

/** Queue names are checked (no NUL), so joining them keeps lists apart. */
const listKey = (queues: readonly string[]) => queues.join('\u0000');
