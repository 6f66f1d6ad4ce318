import { Option, type Command } from 'commander';
import { assertUuid, JOB_STATES, visibleText, type JobRecord, type JobState } from '../../core/index.js';
import { LIST_SCAN_LIMIT } from '../../store/job-page.js';
import { CliError } from '../cli-error.js';
import { positiveInt, withConnection, withFormat, type CliContext, type Format } from '../cli-context.js';
import { iso, json, oneLine, table } from '../output.js';
import type { CliStore } from './dead-letter.command.js';

/** Characters of progress `jobs show` prints as text; `--format json` gives all of it. */
const PROGRESS_WIDTH = 200;

/**
 * A job's debounce or throttle window as lines of `jobs show`: its kind, key and end (a debounce's
 * latest run time; the instant a throttle stops dropping enqueues of its key), or `-` for none.
 */
function windowLines(window: JobRecord['window']): (readonly [string, string | Date | null])[] {
  if (window === null) return [['window', null]];
  return [['window', window.kind], ['windowKey', window.key], ['windowEndsAt', window.endsAt]];
}

/** The job a sequenced job runs after, as `jobs show` names it: null when none is stored (it was first, or retention deleted it). */
type SequenceAfter = { readonly id: string; readonly name: string; readonly state: JobState } | null;

/** The job a sequenced job runs after: its sequence edge among its parents, read only for a job in a sequence. */
async function sequenceAfter(store: CliStore, job: JobRecord): Promise<SequenceAfter> {
  if (job.sequence === null) return null;
  // The most parents a read returns: a job with many `dependsOn` parents still shows its sequence edge.
  const edges = await store.jobEdges({ jobId: job.id, limit: 1_000 });
  const edge = edges?.parents.find((parent) => parent.sequence !== null);
  return edge ? { id: edge.id, name: edge.name, state: edge.state } : null;
}

/**
 * A job's sequence as lines of `jobs show`: its key, its afterFailure and the job it runs after
 * (`-` when none is stored), or `sequence -` for a job in none.
 */
function sequenceLines(sequence: JobRecord['sequence'], after: SequenceAfter): (readonly [string, string | null])[] {
  if (sequence === null) return [['sequence', null]];
  return [['sequence', sequence.key], ['sequenceAfterFailure', sequence.afterFailure], ['sequenceAfter', after && `${after.id} (${after.name}, ${after.state})`]];
}

/**
 * A job's batch as lines of `jobs show`: the batch id and which callback of it the job is (`-` for
 * one of its jobs), or `batch -` for a job in none.
 */
function batchLines(batch: JobRecord['batch']): (readonly [string, string | null])[] {
  if (batch === null) return [['batch', null]];
  return [['batch', batch.id], ['batchCallback', batch.callback]];
}

/** A job's fields as the commands print them; `jobs show` passes the job it runs after, which a listing does not read. */
function view(job: JobRecord, after?: SequenceAfter) {
  return {
    id: job.id,
    name: job.name,
    queue: job.queue,
    state: job.state,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    snoozes: job.snoozes,
    priority: job.priority,
    group: job.group,
    runAt: job.runAt,
    scheduledFor: job.scheduledFor,
    occurrenceId: job.occurrenceId,
    scheduleId: job.scheduleId,
    window: job.window,
    sequence: job.sequence,
    ...(after === undefined ? {} : { sequenceAfter: after }),
    batch: job.batch,
    workerId: job.workerId,
    leasedUntil: job.leasedUntil,
    cancelRequested: job.cancelRequested,
    createdAt: job.createdAt,
    finishedAt: job.finishedAt,
    lastError: job.lastError,
  };
}

interface ListOptions {
  conn?: string;
  table?: string;
  format: Format;
  state?: JobState;
  queue?: string;
  name?: string;
  limit: number;
  before?: string;
}

export function registerJobs(program: Command, ctx: CliContext): void {
  const jobs = program.command('jobs').description('look at jobs');

  withFormat(withConnection(jobs.command('list').description('jobs, newest first, a page at a time')))
    .addOption(new Option('--state <state>', 'only jobs in this state').choices(JOB_STATES))
    .option('--queue <queue>', 'only jobs in this queue')
    .option('--name <name>', 'only jobs with this wire name')
    .option('--limit <n>', 'how many (1 to 1000)', positiveInt('--limit'), 50)
    .option('--before <id>', 'only jobs enqueued before this one: the next page after a page that ended there')
    .action(async (options: ListOptions) => {
      const before = options.before === undefined ? undefined : assertUuid(options.before, '--before');
      await ctx.withStore(options, async ({ store }) => {
        const { jobs: list, next } = await store.jobListPage({ state: options.state, queue: options.queue, name: options.name, limit: options.limit, before });
        // JSON carries the cursor with the page, so a script pages by passing `next` back as --before.
        if (options.format === 'json') return ctx.out(json({ jobs: list.map((job) => view(job)), next }));
        if (list.length === 0) {
          ctx.out(next === null ? 'No jobs.' : `No matching job among the ${LIST_SCAN_LIMIT.toLocaleString('en-US')} jobs this page looked at.`);
        } else {
          ctx.out(
            table(
              ['ID', 'NAME', 'QUEUE', 'STATE', 'ATTEMPTS', 'RUN AT', 'LAST ERROR'],
              list.map((job) => [job.id, job.name, job.queue, job.state, `${job.attempt}/${job.maxAttempts}`, iso(job.runAt), oneLine(job.lastError, 50)]),
            ),
          );
        }
        if (next !== null) ctx.out(`Next page: add --before ${next} to the same command.`);
      });
    });

  withFormat(withConnection(jobs.command('show').description('one job in full (payloads are shown only with --format json)').argument('<id>', 'the job id')))
    .action(async (id: string, options: { conn?: string; table?: string; format: Format }) => {
      const target = assertUuid(id, 'ID');
      await ctx.withStore(options, async ({ store }) => {
        const job = await store.jobGet({ jobId: target });
        if (!job) throw new CliError(`No job with id ${target} exists.`);
        const after = await sequenceAfter(store, job);
        if (options.format === 'json') return ctx.out(json({ ...view(job, after), progress: job.progress, payload: job.payload, output: job.output }));
        // Progress is for people to read, unlike the payload: shown as one line of JSON, cut to a line's width.
        const progress = job.progress === null ? null : visibleText(JSON.stringify(job.progress), { maxLength: PROGRESS_WIDTH });
        const fields = [
          ...Object.entries(view(job)).flatMap(([key, value]) => {
            // The fields that print as lines of their own; the last error comes last, below.
            if (key === 'lastError') return [];
            if (key === 'window') return windowLines(job.window);
            if (key === 'sequence') return sequenceLines(job.sequence, after);
            if (key === 'batch') return batchLines(job.batch);
            return [[key, value] as const];
          }),
          ['progress', progress] as const,
        ];
        const width = Math.max(...fields.map(([key]) => key.length));
        const lines = fields.map(([key, value]) => `${key.padEnd(width)}  ${visibleText(value instanceof Date ? value.toISOString() : value === null ? '-' : String(value))}`);
        // The error keeps its lines (a stack reads better so), each indented under the value
        // column, so no line of it can pass for a field of its own.
        const error = visibleText(job.lastError ?? '-', { keepNewlines: true }).split('\n').join(`\n${' '.repeat(width + 2)}`);
        ctx.out([...lines, `${'lastError'.padEnd(width)}  ${error}`].join('\n'));
      });
    });
}
