import type { Command } from 'commander';
import { recordVerifyRun, verifyHistory, type VerifyReport } from '../../verify/index.js';
import { isoInstant, withConnection, withFormat, type CliContext, type Format } from '../cli-context.js';
import { CliError, EXIT_USAGE, EXIT_VIOLATIONS } from '../cli-error.js';
import { iso, json, oneLine, table } from '../output.js';

const count = (n: number) => n.toLocaleString('en-US');

/** The migration that records the lease in the history (0026), which every history read selects. */
const HISTORY_LEASE_SCHEMA = 26;

function summary(report: VerifyReport): string[] {
  const { entries, jobs, transitions, attempts, leases, releases, jobsCompared, capStarts, rateStarts, uniqueKeysTaken, occurrencesMinted } = report.checked;
  const { since, until } = report;
  const range =
    since === null ? (until === null ? 'the whole history' : `the history before ${iso(until)}`) : until === null ? `the history since ${iso(since)}` : `the history from ${iso(since)} to ${iso(until)}`;
  const compared = report.until === null ? `, and compared ${count(jobsCompared)} stored jobs with the last entry of their history` : '';
  return [`Checked ${count(entries)} entries of ${count(jobs)} jobs in ${range} (${count(transitions)} changes of state, ${count(attempts)} attempts, ${count(leases)} ends of a lease, ${count(releases)} releases of a dependant, ${count(capStarts)} starts under a concurrency limit, ${count(rateStarts)} under a rate, ${count(uniqueKeysTaken)} unique keys taken, ${count(occurrencesMinted)} occurrences minted)${compared}.`];
}

export function registerVerify(program: Command, ctx: CliContext): void {
  withFormat(
    withConnection(
      program
        .command('verify')
        .description("check the store's own history against what the scheduler promises (no job lost, no attempt with two outcomes, …); exits 3 when a promise was broken"),
    ),
  )
    .option('--since <instant>', 'only entries at or after this instant (ISO 8601)', isoInstant('--since'))
    .option('--until <instant>', 'only entries before this instant (ISO 8601)', isoInstant('--until'))
    .option('--no-record', "do not file the report in the audit log (the dashboard's Guarantees page lists filed runs)")
    .action(async (options: { conn?: string; table?: string; format: Format; since?: Date; until?: Date; record: boolean }) => {
      if (options.since && options.until && options.until <= options.since) throw new CliError('--until must come after --since.', EXIT_USAGE);
      await ctx.withStore(options, async ({ store, target }) => {
        const version = await store.schemaVersion();
        if (version !== null && version < HISTORY_LEASE_SCHEMA) {
          throw new CliError(`The scheduler tables at ${target} are at schema version ${version}, and verify needs ${HISTORY_LEASE_SCHEMA}; run "durable-scheduler migrate" first.`);
        }
        const startedAt = new Date();
        const report = await verifyHistory(store, { ...(options.since ? { since: options.since } : {}), ...(options.until ? { until: options.until } : {}) });
        // Filed after the check, and a failure to file (a user that may only read) leaves the
        // report and its exit code as they are.
        const filed = options.record ? await recordVerifyRun(store, report, { actor: ctx.actor, startedAt }).then(() => null, (error: unknown) => error) : null;
        if (options.format === 'json') {
          ctx.out(json(report));
        } else {
          ctx.out(summary(report).join('\n'));
          if (report.checked.entries === 0) {
            ctx.out('Nothing was checked: the range holds no history entry.');
          } else if (report.violationCount === 0) {
            ctx.out('No promise was broken.');
          } else {
            const shown = report.violations.length < report.violationCount ? ` (the first ${count(report.violations.length)} shown)` : '';
            ctx.out(`${count(report.violationCount)} broken ${report.violationCount === 1 ? 'promise' : 'promises'}${shown}:`);
            ctx.out(table(['RULE', 'JOB', 'ENTRIES', 'WHAT'], report.violations.map((v) => [v.rule, v.jobId, v.entryIds.join(','), oneLine(v.message, 200)])));
          }
          ctx.out(['Not checked:', ...report.notChecked.map((line) => `- ${line}`)].join('\n'));
          if (filed !== null) ctx.out(`The report was not filed in the audit log (${oneLine(filed instanceof Error ? filed.message : String(filed), 200)}); --no-record skips filing.`);
        }
        if (report.violationCount > 0) {
          throw new CliError(`verify found ${count(report.violationCount)} broken ${report.violationCount === 1 ? 'promise' : 'promises'} in the history.`, EXIT_VIOLATIONS);
        }
      });
    });
}
