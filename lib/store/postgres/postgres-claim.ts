import { claimOrder, type JobRow } from '../job-row.js';
import type { CheckedClaimParams } from '../checked/store-params.js';
import type { PgExecutor } from './pg-executor.js';
import type { claimLimitedQuery } from './queries/claim-limited.query.js';
import type { claimUnlimitedQuery } from './queries/claim-unlimited.query.js';

/** Runs `work` in a short transaction of its own. */
export type ClaimTransaction = <T>(work: (db: PgExecutor) => Promise<T>) => Promise<T>;

/**
 * After the unlimited claim found a limit, the limited claim is used for this many claims before
 * the unlimited one is tried again: a limit, once set, usually stays.
 */
const LIMITED_CLAIMS_BEFORE_RETRY = 256;

/**
 * Chooses, claim by claim, between the two claim statements: the unlimited one (one round trip,
 * and most databases have no limit) and the limited one (a transaction of its own). The choice is
 * a guess the database corrects: the unlimited claim claims nothing once a limit exists, and says
 * so, and the limited one then runs in its place.
 */
export class PostgresClaimPath {
  private limitedClaimsLeft = 0;

  constructor(
    private readonly sql: {
      readonly claimUnlimited: ReturnType<typeof claimUnlimitedQuery>;
      readonly claimLimited: ReturnType<typeof claimLimitedQuery>;
    },
    private readonly transaction: ClaimTransaction,
    /** Provisions the limits declared at enqueue, in a transaction of its own (provision-pending-limits.query.ts). */
    private readonly provisionPending: () => Promise<unknown>,
    /** Told when a rate limit a claim spent frees its next start (rate-wake.ts). */
    private readonly rateWake: (delayMs: number) => void = () => {},
  ) {}

  /** Leases up to `params.limit` jobs, in run order. */
  async claim(db: PgExecutor, params: CheckedClaimParams): Promise<JobRow[]> {
    let rows: JobRow[];
    if (this.limitedClaimsLeft > 0) {
      this.limitedClaimsLeft -= 1;
      rows = await this.limitedThenProvision(params);
    } else {
      const fast = await this.sql.claimUnlimited(db, params);
      if (fast.limited) {
        this.limitedClaimsLeft = LIMITED_CLAIMS_BEFORE_RETRY;
        rows = await this.limitedThenProvision(params);
      } else rows = fast.rows;
    }
    return rows.sort(claimOrder);
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

  private async limited(params: CheckedClaimParams) {
    const claimed = await this.transaction((tx) => this.sql.claimLimited(tx, params));
    if (claimed.rateWakeMs !== null) this.rateWake(claimed.rateWakeMs);
    return claimed;
  }
}
