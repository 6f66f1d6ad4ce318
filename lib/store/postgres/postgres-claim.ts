import { claimOrder, type JobRow } from '../job-row.js';
import type { AppliedOutcomes } from './queries/outcome-results.js';
import type { CheckedClaimParams, NormalizedOutcome } from '../checked/store-params.js';
import type { PgExecutor } from './pg-executor.js';
import { ClaimCursors } from './claim-cursor.js';
import { GroupTurns } from '../group-turns.js';
import type { claimLimitedQuery, RoundTurns } from './queries/claim-limited.query.js';
import type { claimLanesQuery, LaneClaimResult } from './queries/claim-lanes-fair.query.js';
import type { claimUnlimitedQuery } from './queries/claim-unlimited.query.js';
import type { completeAndClaimLanesQuery, completeAndClaimQuery } from './queries/complete-and-claim.query.js';
import type { completeJobsQuery } from './queries/complete-jobs.query.js';

/** Runs `work` in a short transaction of its own. */
export type ClaimTransaction = <T>(work: (db: PgExecutor) => Promise<T>) => Promise<T>;

/**
 * After the unlimited claim found a job in a lane, or the lane claim found a limit, the claim that
 * took over is used for this many claims before the unlimited one is tried again: a limit, once
 * set, usually stays, and so does a backlog in lanes.
 */
const CLAIMS_BEFORE_RETRY = 256;

/** The claims that take over from the unlimited one (see {@link PostgresClaimPath}). */
type Fallback = 'lanes' | 'limited';

/**
 * A limited claim whose window held back so many jobs that its batch is not full reads on, in the
 * same transaction, with a window this many times wider each round (the jobs it held back are
 * parked by then, so each round reads past them), up to {@link MAX_WINDOW} and {@link MAX_ROUNDS}
 * rounds. A backlog longer than that is parked over several claims: the claim that stops short
 * wakes its process's workers to claim again at once.
 */
const WINDOW_GROWTH = 4;
const MAX_WINDOW = 4_096;
const MAX_ROUNDS = 6;

/** What the claim path tells its store besides the jobs it leased. */
export interface ClaimSignals {
  /** A rate limit a claim spent frees its next start in `delayMs` (rate-wake.ts). */
  rateWake(delayMs: number): void;
  /** A claim stopped short of a backlog it was parking: claim again now. */
  claimAgain(): void;
  /** Whether held-back jobs were seen by the last limited claim (cleared by an unlimited one). */
  held(seen: boolean): void;
}

const NO_SIGNALS: ClaimSignals = { rateWake: () => {}, claimAgain: () => {}, held: () => {} };

/**
 * Chooses, claim by claim, between the three claim statements: the unlimited one (one round trip,
 * and most databases have no limit), the lane claim (one round trip too, for a database with jobs
 * in lanes, a group's or a held-back one's, and no limit: claim-lanes-fair.query.ts) and the
 * limited one (a transaction of its own). The choice is a guess the database corrects: the
 * unlimited claim claims nothing once a limit exists or a job waits in a lane, and says so; the
 * lane claim runs in its place, and claims nothing once a limit exists, and says so; the limited
 * one then runs in its place.
 */
export class PostgresClaimPath {
  /** The claim used in place of the unlimited one, and for how many more claims; null for none. */
  private fallback: { readonly claim: Fallback; left: number } | null = null;
  /** Where the unlimited claim reads from while a held horizon leaves dead entries in its way. */
  readonly cursors = new ClaimCursors();
  /** Where the limited claim of each queue list takes its turn from (group-turns.ts). */
  private readonly turns = new GroupTurns();

  constructor(
    private readonly sql: {
      readonly claimUnlimited: ReturnType<typeof claimUnlimitedQuery>;
      readonly claimLimited: ReturnType<typeof claimLimitedQuery>;
      readonly complete: ReturnType<typeof completeJobsQuery>;
      readonly completeAndClaim: ReturnType<typeof completeAndClaimQuery>;
      readonly claimLanes: ReturnType<typeof claimLanesQuery>;
      readonly completeAndClaimLanes: ReturnType<typeof completeAndClaimLanesQuery>;
    },
    private readonly transaction: ClaimTransaction,
    /** Provisions the limits declared at enqueue, in a transaction of its own (provision-pending-limits.query.ts). */
    private readonly provisionPending: () => Promise<unknown>,
    private readonly signals: ClaimSignals = NO_SIGNALS,
  ) {}

  /** Leases up to `params.limit` jobs, in run order. */
  async claim(db: PgExecutor, params: CheckedClaimParams): Promise<JobRow[]> {
    let rows: JobRow[];
    const use = this.take();
    if (use === 'limited') {
      rows = await this.limitedThenProvision(params);
    } else if (use === 'lanes') {
      rows = await this.lanes(db, params);
    } else {
      const { params: sent, cursor } = this.cursors.plan(params);
      const fast = await this.sql.claimUnlimited(db, sent, cursor);
      if (fast.limited) {
        this.fallBackTo('lanes');
        rows = await this.lanes(db, params);
      } else {
        this.signals.held(false);
        this.cursors.observe(sent, fast.rows, fast.walked);
        rows = fast.rows;
      }
    }
    return rows.sort(claimOrder);
  }

  /**
   * Writes `outcomes` for `workerId`, then leases up to `params.limit` jobs. While the database has
   * no limit both go in one statement (complete-and-claim.query.ts); with one, the outcomes are
   * written first and the limited claim follows, so it counts what they freed. `claimError` is set
   * when that second claim failed: the outcomes were written all the same.
   */
  async completeAndClaim(
    db: PgExecutor,
    outcomes: readonly NormalizedOutcome[],
    params: CheckedClaimParams,
  ): Promise<AppliedOutcomes & { rows: JobRow[]; claimError?: unknown }> {
    let applied: AppliedOutcomes;
    const use = this.take();
    if (use === 'unlimited') {
      const { params: sent, cursor } = this.cursors.plan(params);
      const both = await this.sql.completeAndClaim(db, outcomes, sent, cursor);
      if (!both.limited) {
        this.signals.held(false);
        this.cursors.observe(sent, both.rows, both.walked);
        return { results: both.results, releasing: both.releasing, rows: both.rows.sort(claimOrder) };
      }
      this.fallBackTo('lanes');
      applied = both;
    } else if (use === 'lanes') {
      const both = await this.sql.completeAndClaimLanes(db, outcomes, params, this.turnsOf(params.queues));
      if (!both.limited) {
        let rows = both.rows;
        if (this.afterLanes(params, both)) {
          try {
            rows = [...rows, ...(await this.lanes(db, { ...params, limit: params.limit - rows.length }))];
          } catch (claimError) {
            return { results: both.results, releasing: both.releasing, rows: rows.sort(claimOrder), claimError };
          }
        }
        return { results: both.results, releasing: both.releasing, rows: rows.sort(claimOrder) };
      }
      this.fallBackTo('limited');
      applied = both;
    } else {
      applied = await this.sql.complete(db, params.workerId, outcomes);
    }
    const { results, releasing } = applied;
    try {
      const rows = this.fallback?.claim === 'limited' ? await this.limitedThenProvision(params) : await this.lanes(db, params);
      return { results, releasing, rows: rows.sort(claimOrder) };
    } catch (claimError) {
      return { results, releasing, rows: [], claimError };
    }
  }

  /**
   * The lane claim, again for the rest of the batch while a group's lane stopped at its share
   * (rarely: only while groups with fewer jobs than their share wait beside a backlog); once a limit
   * exists, the limited claim in its place, for this claim and the next ones.
   */
  private async lanes(db: PgExecutor, params: CheckedClaimParams): Promise<JobRow[]> {
    const rows: JobRow[] = [];
    let more = false;
    for (let round = 0; round < MAX_ROUNDS && rows.length < params.limit; round++) {
      const claimed = await this.sql.claimLanes(db, { ...params, limit: params.limit - rows.length }, this.turnsOf(params.queues));
      if (claimed.limited) {
        this.fallBackTo('limited');
        return [...rows, ...(await this.limitedThenProvision({ ...params, limit: params.limit - rows.length }))];
      }
      rows.push(...claimed.rows);
      more = this.afterLanes(params, claimed);
      if (!more) break;
    }
    // Stopped after its rounds with lanes still giving their shares: the worker claims again now.
    if (more && rows.length < params.limit) this.signals.claimAgain();
    return rows;
  }

  /**
   * What a lane claim tells: nothing is held back, and where the next claim takes its turn from.
   * True when a group's lane stopped at its share and the batch is not full: claim again now.
   */
  private afterLanes(params: CheckedClaimParams, claimed: LaneClaimResult): boolean {
    this.signals.held(false);
    this.turns.record(params.queues, claimed.turnGroup === null ? undefined : { groupKey: claimed.turnGroup }, claimed.turnLane);
    return claimed.more && claimed.rows.length > 0;
  }

  /** The claim this call uses: the fallback while it has claims left, counting this one; else the unlimited claim. */
  private take(): Fallback | 'unlimited' {
    if (this.fallback === null || this.fallback.left === 0) return 'unlimited';
    this.fallback.left -= 1;
    return this.fallback.claim;
  }

  /** Uses `claim` in place of the unlimited one for this claim and the next {@link CLAIMS_BEFORE_RETRY}. */
  private fallBackTo(claim: Fallback): void {
    this.fallback = { claim, left: CLAIMS_BEFORE_RETRY };
  }

  private turnsOf(queues: readonly string[]): RoundTurns {
    return { laneAfter: this.turns.laneAfter(queues), after: this.turns.after(queues) };
  }

  /**
   * A limit declared at enqueue that still waits for its slots is provisioned after the claim that
   * found it, and the rest of the batch is claimed again, since that claim passed over its key's jobs.
   */
  private async limitedThenProvision(params: CheckedClaimParams): Promise<JobRow[]> {
    const claimed = await this.limited(params);
    if (!claimed.pending) return claimed.rows;
    await this.provisionPending();
    if (claimed.rows.length === params.limit) return claimed.rows;
    const more = await this.limited({ ...params, limit: params.limit - claimed.rows.length });
    return [...claimed.rows, ...more.rows];
  }

  /** One limited claim: rounds of widening windows in one transaction, until the batch is full or nothing held back is left in the way. */
  private async limited(params: CheckedClaimParams): Promise<{ rows: JobRow[]; pending: boolean }> {
    const claimed = await this.transaction(async (tx) => {
      const pending = await this.sql.claimLimited.begin(tx);
      const rows: JobRow[] = [];
      let window = params.limit;
      let last: Awaited<ReturnType<typeof this.sql.claimLimited.round>> | undefined;
      const laneAfter = this.turns.laneAfter(params.queues);
      let after = this.turns.after(params.queues);
      let turnLane: { readonly queue: string; readonly key: string } | null = null;
      for (let round = 0; round < MAX_ROUNDS && rows.length < params.limit; round++) {
        last = await this.sql.claimLimited.round(tx, { ...params, limit: params.limit - rows.length }, window, { laneAfter, after });
        rows.push(...last.rows);
        if (last.turnGroup !== null) after = last.turnGroup;
        if (last.turnLane !== null) turnLane = last.turnLane;
        if (last.rateWakeMs !== null) this.signals.rateWake(last.rateWakeMs);
        if (!last.more) break;
        window = Math.min(window * WINDOW_GROWTH, MAX_WINDOW);
      }
      return { rows, pending, held: last?.held === true, short: last?.more === true && rows.length < params.limit, after, turnLane };
    });
    this.turns.record(params.queues, claimed.after === null ? undefined : { groupKey: claimed.after }, claimed.turnLane);
    this.signals.held(claimed.held);
    if (claimed.short) this.signals.claimAgain();
    return claimed;
  }
}
