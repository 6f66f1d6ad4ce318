import type { AuditRecord, OperatorStore } from '../store/index.js';
import type { VerifyRule, VerifyViolation } from './history-rules.js';
import type { VerifyReport } from './verify-history.js';

/** The audit action a recorded verify run is filed under. */
export const VERIFY_RUN_ACTION = 'verify.run';

/** How many of a run's violations its record keeps; the count keeps them all. */
export const RECORDED_VIOLATIONS = 20;

/** A verify run as the audit log keeps it: when, over what, what it checked and found. */
export interface VerifyRun {
  /** When it finished (the audit entry's time, on the store's clock). */
  readonly at: Date;
  /** Who ran it: `scheduled` for the module's scheduled verify, `cli`, or an operator's name. */
  readonly actor: string;
  readonly startedAt: Date;
  readonly since: Date | null;
  readonly until: Date | null;
  readonly checked: VerifyReport['checked'];
  readonly violationCount: number;
  /** The first {@link RECORDED_VIOLATIONS} violations. */
  readonly violations: readonly VerifyViolation[];
  readonly rules: readonly VerifyRule[];
  readonly notChecked: readonly string[];
}

type RecordStore = Pick<OperatorStore, 'auditAppend'>;

/** The range a run covered, in words: its audit entry's target. */
export function rangeText(since: Date | null, until: Date | null): string {
  if (since === null) return until === null ? 'the whole history' : `before ${until.toISOString()}`;
  return until === null ? `since ${since.toISOString()}` : `${since.toISOString()} to ${until.toISOString()}`;
}

/**
 * Files a run's report in the audit log (`verify.run`), for the dashboard's Guarantees page and
 * the scheduled verify's pace. It keeps the counts, the first violations (job ids, entry ids and
 * the rule's sentence: never a payload) and what was not checked.
 */
export async function recordVerifyRun(store: RecordStore, report: VerifyReport, run: { readonly actor: string; readonly startedAt: Date }): Promise<void> {
  await store.auditAppend({
    actor: run.actor,
    action: VERIFY_RUN_ACTION,
    target: rangeText(report.since, report.until),
    detail: {
      startedAt: run.startedAt.toISOString(),
      since: report.since?.toISOString() ?? null,
      until: report.until?.toISOString() ?? null,
      checked: report.checked,
      violationCount: report.violationCount,
      violations: report.violations.slice(0, RECORDED_VIOLATIONS).map(({ rule, jobId, entryIds, message }) => ({ rule, jobId, entryIds: entryIds.slice(0, 10), message })),
      rules: report.rules.map((r) => r.rule),
      notChecked: report.notChecked,
    },
  });
}

/**
 * The newest recorded runs, newest first. An entry this version cannot read (written by hand, or
 * by a later version with another shape) is left out rather than shown wrong.
 */
export async function readVerifyRuns(store: Pick<OperatorStore, 'auditList'>, limit = 10): Promise<VerifyRun[]> {
  const entries = await store.auditList({ action: VERIFY_RUN_ACTION, limit });
  return entries.map(toVerifyRun).filter((run): run is VerifyRun => run !== null);
}

const instant = (value: unknown): Date | null | undefined => {
  if (value === null) return null;
  if (typeof value !== 'string') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
};
const count = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const strings = (value: unknown): value is string[] => Array.isArray(value) && value.every((s) => typeof s === 'string');

function toVerifyRun(entry: AuditRecord): VerifyRun | null {
  const d = entry.detail as Record<string, unknown> | null;
  if (d === null || typeof d !== 'object') return null;
  const [startedAt, since, until] = [instant(d.startedAt), instant(d.since), instant(d.until)];
  const checked = d.checked as Record<string, unknown> | null;
  if (!startedAt || since === undefined || until === undefined || !count(d.violationCount) || !strings(d.rules) || !strings(d.notChecked)) return null;
  if (checked === null || typeof checked !== 'object' || !['entries', 'jobs', 'transitions', 'attempts', 'jobsCompared'].every((k) => count(checked[k]))) return null;
  if (!Array.isArray(d.violations)) return null;
  const violations = (d.violations as Record<string, unknown>[]).filter(
    (v) => v !== null && typeof v === 'object' && typeof v.rule === 'string' && typeof v.jobId === 'string' && typeof v.message === 'string' && Array.isArray(v.entryIds) && v.entryIds.every(count),
  ) as unknown as VerifyViolation[];
  return {
    at: entry.at,
    actor: entry.actor,
    startedAt,
    since,
    until,
    // An entry without the lease counts (written by hand) reads as none judged.
    checked: {
      ...(checked as VerifyReport['checked']),
      ...Object.fromEntries((['leases', 'leasesUnrecorded', 'releases', 'releasesUnjudged', 'capStarts', 'rateStarts', 'startsUnattributed', 'uniqueKeysTaken', 'occurrencesMinted'] as const).map((k) => [k, count(checked[k]) ? checked[k] : 0])),
    },
    violationCount: d.violationCount,
    violations,
    rules: d.rules as VerifyRule[],
    notChecked: d.notChecked,
  };
}
