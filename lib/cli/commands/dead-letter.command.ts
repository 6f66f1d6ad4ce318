import type { Command } from 'commander';
import { assertUuid } from '../../core/index.js';
import { CliError } from '../cli-error.js';
import { positiveInt, withConnection, withFormat, type CliContext, type Format } from '../cli-context.js';
import { iso, json, oneLine, table } from '../output.js';

export function registerDeadLetter(program: Command, ctx: CliContext): void {
  const deadLetter = program.command('dead-letter').description('list and replay dead-lettered jobs');

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
          if (job.state !== 'dead_lettered' && job.state !== 'quarantined') {
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
            : `Replayed schedule ${schedule.id} (${schedule.name}): it mints again (the occurrence that stopped it no longer exists).`,
        );
      });
    });
}
