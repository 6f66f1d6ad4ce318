import type { Command } from 'commander';
import { assertUuid, DEAD_LETTER_STATES, IllegalTransitionError, isDeadLetterState, JobNotFoundError } from '../../core/index.js';
import { CliError } from '../cli-error.js';
import { positiveInt, withConnection, withFormat, type CliContext, type Format } from '../cli-context.js';
import { iso, json, oneLine, table } from '../output.js';

export function registerDeadLetter(program: Command, ctx: CliContext): void {
  const deadLetter = program.command('dead-letter').description('list, replay and cancel dead-lettered jobs');

  withFormat(withConnection(deadLetter.command('list').description('dead-lettered jobs, most recently dead-lettered first')))
    .option('--limit <n>', 'how many (1 to 1000)', positiveInt('--limit'), 50)
    .action(async (options: { conn?: string; table?: string; format: Format; limit: number }) => {
      await ctx.withStore(options, async ({ store }) => {
        const jobs = await store.jobListDeadLettered({ limit: options.limit });
        if (options.format === 'json') {
          ctx.out(
            json(
              jobs.map((job) => ({
                id: job.id,
                name: job.name,
                scheduleId: job.scheduleId,
                attempts: job.attempt,
                maxAttempts: job.maxAttempts,
                deadLetteredAt: job.finishedAt,
                lastError: job.lastError,
              })),
            ),
          );
          return;
        }
        if (jobs.length === 0) {
          ctx.out('No dead-lettered jobs.');
          return;
        }
        ctx.out(
          table(
            ['ID', 'NAME', 'SCHEDULE', 'ATTEMPTS', 'DEAD-LETTERED AT', 'LAST ERROR'],
            jobs.map((job) => [job.id, job.name, job.scheduleId ?? '-', `${job.attempt}/${job.maxAttempts}`, iso(job.finishedAt), oneLine(job.lastError, 60)]),
          ),
        );
      });
    });

  withConnection(deadLetter.command('replay').description('replay a dead-lettered (or quarantined) job, or a dead-lettered schedule').argument('<id>', 'a job id or a schedule id'))
    .action(async (id: string, options: { conn?: string; table?: string }) => {
      const target = assertUuid(id, 'ID');
      await ctx.withStore(options, async ({ store }) => {
        const job = await store.jobGet({ jobId: target });
        if (job) {
          if (!isDeadLetterState(job.state)) {
            throw new CliError(`Job ${job.id} is ${job.state}, not dead-lettered or quarantined; nothing to replay.`);
          }
          const replayed = await store.jobReplay({ jobId: target, actor: ctx.actor });
          const schedule = replayed.scheduleId ? await store.scheduleGet({ scheduleId: replayed.scheduleId }) : null;
          const resumed = schedule && job.scheduleId && schedule.state === 'active' ? ` Schedule ${schedule.id} mints again.` : '';
          ctx.out(`Replayed job ${replayed.id} (${replayed.name}): attempt 0, due now.${resumed}`);
          return;
        }
        const schedule = await store.scheduleGet({ scheduleId: target });
        if (!schedule) throw new CliError(`No job or schedule with id ${target} exists.`);
        if (schedule.state !== 'dead_lettered') throw new CliError(`Schedule ${schedule.id} is ${schedule.state}, not dead-lettered; nothing to replay.`);
        const { job: occurrence } = await store.scheduleReplay({ scheduleId: target, actor: ctx.actor });
        ctx.out(
          occurrence
            ? `Replayed schedule ${schedule.id} (${schedule.name}): occurrence ${occurrence.id} is due now and the schedule mints again.`
            : `Replayed schedule ${schedule.id} (${schedule.name}): it mints again (the occurrence that stopped it was discarded or deleted, so it stays as it is).`,
        );
      });
    });

  registerBulk(deadLetter, ctx, BULK.replay);
  registerBulk(deadLetter, ctx, BULK.cancel);
}

/** What tells one bulk command from the other: its verb, the store call, and its sentences. */
export interface BulkCommand {
  readonly name: 'replay-all' | 'cancel-all';
  readonly description: string;
  readonly past: string;
  readonly act: (store: CliStore, jobId: string, actor: string) => Promise<unknown>;
  readonly after: string;
  readonly skipped: string;
}

export type CliStore = Parameters<Parameters<CliContext['withStore']>[1]>[0]['store'];

/** The two bulk commands; exported for the test that acts on a job replayed after its listing. @internal */
export const BULK: Record<'replay' | 'cancel', BulkCommand> = {
  replay: {
    name: 'replay-all',
    description: 'replay the recent dead letters that match a filter, as the dashboard replays a group; --dry-run lists them first',
    past: 'Replayed',
    act: (store, jobId, actor) => store.jobReplay({ jobId, actor }),
    after: ': attempt 0, due now.',
    skipped: ' The others could not be: they had left the dead-letter list since they were read, or another job holds their unique key.',
  },
  cancel: {
    name: 'cancel-all',
    description: 'cancel (discard) the recent dead letters that match a filter: they end cancelled and retention deletes them; --dry-run lists them first',
    past: 'Cancelled',
    // Only from the dead-letter states: a job replayed since the listing is left running its course.
    act: (store, jobId, actor) => store.jobCancel({ jobId, actor, onlyFrom: DEAD_LETTER_STATES }),
    after: ': they keep their errors and history, and retention deletes them.',
    skipped: ' The others had left the dead-letter list since they were read.',
  },
};

function registerBulk(deadLetter: Command, ctx: CliContext, bulk: BulkCommand): void {
  const verb = bulk.name.slice(0, -'-all'.length);
  withConnection(deadLetter.command(bulk.name).description(bulk.description))
    .option('--name <name>', 'only jobs of this wire name')
    .option('--error <text>', 'only jobs whose last error\'s first line contains this text')
    .option('--limit <n>', 'look at this many of the most recent dead letters (1 to 1000)', positiveInt('--limit'), 1_000)
    .option('--dry-run', `list what would be ${verb === 'replay' ? 'replayed' : 'cancelled'}, and change nothing`)
    .action(async (options: { conn?: string; table?: string; name?: string; error?: string; limit: number; dryRun?: boolean }) => {
      if (!options.name && !options.error) {
        throw new CliError(`dead-letter ${bulk.name} needs a filter: pass --name, --error or both, or ${verb} one job with ${verb === 'replay' ? 'dead-letter replay' : 'cancel'} <id>.`);
      }
      await ctx.withStore(options, async ({ store }) => {
        const matches = (await store.jobListDeadLettered({ limit: options.limit })).filter(
          (job) => (!options.name || job.name === options.name) && (!options.error || (job.lastError ?? '').split('\n', 1)[0]!.includes(options.error)),
        );
        if (matches.length === 0) {
          ctx.out(`No dead letter among the ${options.limit} most recent matches.`);
          return;
        }
        if (options.dryRun) {
          ctx.out(table(['ID', 'NAME', 'DEAD-LETTERED AT', 'LAST ERROR'], matches.map((job) => [job.id, job.name, iso(job.finishedAt), oneLine(job.lastError, 60)])));
          ctx.out(`${matches.length} would be ${bulk.past.toLowerCase()}; run again without --dry-run to ${verb} them.`);
          return;
        }
        let done = 0;
        for (const job of matches) {
          try {
            await bulk.act(store, job.id, ctx.actor);
            done += 1;
          } catch (error) {
            // Replayed, cancelled or purged by someone else since the listing: not ours to report as a failure.
            if (!(error instanceof IllegalTransitionError) && !(error instanceof JobNotFoundError)) throw error;
          }
        }
        ctx.out(`${bulk.past} ${done} of ${matches.length} matching dead letters${bulk.after}${done < matches.length ? bulk.skipped : ''}`);
      });
    });
}
