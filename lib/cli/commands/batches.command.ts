import type { Command } from 'commander';
import { assertUuid } from '../../core/index.js';
import { OPEN_STATES } from '../../store/batch/batch-summary.js';
import type { BatchSummary } from '../../store/index.js';
import { CliError } from '../cli-error.js';
import { positiveInt, withConnection, withFormat, type CliContext, type Format } from '../cli-context.js';
import { iso, json, table } from '../output.js';
import type { CliStore } from './dead-letter.command.js';

/** The most batches one page holds: the store's most for `jobListBatches`. */
const MAX_PAGE = 200;

/** A batch as `batches list` gives it: its counts and callbacks (a listing reads no failed ids). */
function listView(batch: BatchSummary) {
  const { id, createdAt, total, pending, succeeded, failed, cancelled, ended, callbacks } = batch;
  return { id, createdAt, total, pending, succeeded, failed, cancelled, ended, callbacks };
}

/** The callbacks of a batch that have not ended: the ones a cancel of it reaches. */
function openCallbacks(batch: BatchSummary): number {
  return batch.callbacks.filter((callback) => OPEN_STATES.includes(callback.state)).length;
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

async function batchOf(store: CliStore, batchId: string, failedLimit: number): Promise<BatchSummary> {
  const batch = await store.jobBatch({ batchId, failedLimit });
  if (!batch) throw new CliError(`No batch with id ${batchId} exists.`);
  return batch;
}

export function registerBatches(program: Command, ctx: CliContext): void {
  const batches = program.command('batches').description('look at and cancel batches: jobs written together with enqueueBatch, and the callbacks that run when they end');

  withFormat(withConnection(batches.command('list').description('batches, newest first, a page at a time, with their progress and callbacks')))
    .option('--limit <n>', `how many (1 to ${MAX_PAGE})`, positiveInt('--limit', MAX_PAGE), 50)
    .option('--before <id>', 'only batches written before this one: the next page after a page that ended there')
    .action(async (options: { conn?: string; table?: string; format: Format; limit: number; before?: string }) => {
      const before = options.before === undefined ? undefined : assertUuid(options.before, '--before');
      await ctx.withStore(options, async ({ store }) => {
        // One past the page, to tell whether another follows; at the store's most a full page is taken to.
        const read = await store.jobListBatches({ limit: Math.min(options.limit + 1, MAX_PAGE), ...(before === undefined ? {} : { before }) });
        const list = read.slice(0, options.limit);
        const next = read.length > options.limit || (options.limit === MAX_PAGE && list.length === MAX_PAGE) ? list.at(-1)!.id : null;
        if (options.format === 'json') return ctx.out(json({ batches: list.map(listView), next }));
        if (list.length === 0) return ctx.out(before === undefined ? 'No batches.' : 'No batch was written before that one.');
        ctx.out(
          table(
            ['ID', 'WRITTEN', 'TOTAL', 'PENDING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'ENDED', 'CALLBACKS'],
            list.map((b) => [
              b.id,
              iso(b.createdAt),
              String(b.total),
              String(b.pending),
              String(b.succeeded),
              String(b.failed),
              String(b.cancelled),
              b.ended ? 'yes' : 'no',
              b.callbacks.map((callback) => `${callback.kind}:${callback.state}`).join(' '),
            ]),
          ),
        );
        if (next !== null) ctx.out(`Next page: add --before ${next} to the same command.`);
      });
    });

  withFormat(withConnection(batches.command('show').description('one batch: its counts, its callbacks and the ids of its failed jobs').argument('<id>', 'the batch id')))
    .action(async (id: string, options: { conn?: string; table?: string; format: Format }) => {
      const target = assertUuid(id, 'ID');
      await ctx.withStore(options, async ({ store }) => {
        // The store's default: the first 1,000 failed ids, by id.
        const batch = await batchOf(store, target, 1_000);
        if (options.format === 'json') return ctx.out(json(batch));
        const fields: (readonly [string, string])[] = [
          ['id', batch.id],
          ['createdAt', iso(batch.createdAt)],
          ['total', String(batch.total)],
          ['pending', String(batch.pending)],
          ['succeeded', String(batch.succeeded)],
          ['failed', String(batch.failed)],
          ['cancelled', String(batch.cancelled)],
          ['ended', String(batch.ended)],
          // One line per callback and per failed job, so each can be picked out with grep.
          ...batch.callbacks.map((callback) => ['callback', `${callback.kind.padEnd(8)} ${callback.jobId} (${callback.state})`] as const),
          ...(batch.failedJobIds.length === 0 ? [['failedJob', '-'] as const] : batch.failedJobIds.map((jobId) => ['failedJob', jobId] as const)),
          ...(batch.failed > batch.failedJobIds.length ? [['failedJob', `and ${batch.failed - batch.failedJobIds.length} more (the first ${batch.failedJobIds.length} by id are listed)`] as const] : []),
        ];
        const width = Math.max(...fields.map(([key]) => key.length));
        ctx.out(fields.map(([key, value]) => `${key.padEnd(width)}  ${value}`).join('\n'));
      });
    });

  withConnection(
    batches
      .command('cancel')
      .description('cancel every job of a batch that has not ended, its callbacks first, so no callback runs; --dry-run says what it would cancel first')
      .argument('<id>', 'the batch id'),
  )
    .option('--dry-run', 'say what would be cancelled, and change nothing')
    .action(async (id: string, options: { conn?: string; table?: string; dryRun?: boolean }) => {
      const target = assertUuid(id, 'ID');
      await ctx.withStore(options, async ({ store }) => {
        const batch = await batchOf(store, target, 0);
        const callbacks = openCallbacks(batch);
        if (batch.pending === 0 && callbacks === 0) return ctx.out(`Batch ${batch.id} has ended, and so have its callbacks; nothing changed.`);
        if (options.dryRun) {
          return ctx.out(
            `Batch ${batch.id}: ${plural(batch.pending, 'job', 'jobs')} of ${batch.total} pending and ${plural(callbacks, 'callback', 'callbacks')} not ended would be cancelled (a running one is asked to stop); run again without --dry-run to cancel them.`,
          );
        }
        // Each job is cancelled, and audited, on its own, as `cancel <ID>` would.
        const { cancelled, cancelRequested } = await store.jobCancelBatch({ batchId: batch.id, actor: ctx.actor });
        if (cancelled === 0 && cancelRequested === 0) return ctx.out(`Batch ${batch.id}: what was pending ended before the cancel reached it; nothing changed.`);
        const asked = cancelRequested > 0 ? `; ${plural(cancelRequested, 'running job was', 'running jobs were')} asked to stop and ${cancelRequested === 1 ? 'ends' : 'end'} cancelled when ${cancelRequested === 1 ? 'its attempt stops' : 'their attempts stop'}` : '';
        ctx.out(`Cancelled batch ${batch.id}: ${plural(cancelled, 'waiting job or callback', 'waiting jobs and callbacks')} cancelled${asked}.`);
      });
    });
}
