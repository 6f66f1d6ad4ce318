import type { Command } from 'commander';
import type { BlockedSequence } from '../../store/index.js';
import { positiveInt, withConnection, withFormat, type CliContext, type Format } from '../cli-context.js';
import { iso, json, oneLine, nextPageAfter, table } from '../output.js';

function view({ key, job, nextJobId }: BlockedSequence) {
  return {
    key,
    jobId: job.id,
    name: job.name,
    queue: job.queue,
    state: job.state,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    failedAt: job.finishedAt,
    lastError: job.lastError,
    nextJobId,
  };
}

export function registerSequences(program: Command, ctx: CliContext): void {
  const sequences = program.command('sequences').description('look at sequences: the jobs of one key that run one at a time, in enqueue order');

  withFormat(withConnection(sequences.command('blocked').description('sequences whose next job waits behind a job that failed for good, by key, a page at a time')))
    .option('--limit <n>', 'how many (1 to 1000)', positiveInt('--limit'), 50)
    .option('--after <key>', 'the page after this sequence key (the last key of the page before)')
    .action(async (options: { conn?: string; table?: string; format: Format; limit: number; after?: string }) => {
      await ctx.withStore(options, async ({ store }) => {
        const list = await store.jobListBlockedSequences({ limit: options.limit, ...(options.after === undefined ? {} : { after: options.after }) });
        // A full page may have more after it; its last key leads on.
        const next = list.length === options.limit ? list.at(-1)!.key : null;
        if (options.format === 'json') return ctx.out(json({ sequences: list.map(view), next }));
        if (list.length === 0) return ctx.out(options.after === undefined ? 'No sequence is blocked.' : 'No blocked sequence after that key.');
        ctx.out(
          table(
            ['KEY', 'FAILED JOB', 'NAME', 'STATE', 'FAILED AT', 'NEXT JOB', 'LAST ERROR'],
            list.map((s) => [oneLine(s.key, 60), s.job.id, s.job.name, s.job.state, iso(s.job.finishedAt), s.nextJobId, oneLine(s.job.lastError, 60)]),
          ),
        );
        if (next !== null) ctx.out(nextPageAfter(next, 'key'));
      });
    });
}
