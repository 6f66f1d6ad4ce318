import type { Command } from 'commander';
import { assertUuid } from '../../core/index.js';
import type { Schedule } from '../../store/index.js';
import { positiveInt, withConnection, withFormat, type CliContext, type Format } from '../cli-context.js';
import { iso, json, table } from '../output.js';

function timing(schedule: Schedule): string {
  const r = schedule.recurrence;
  return r.kind === 'cron' ? `cron "${r.cron}" ${r.timezone}` : `every ${r.everyMs} ms`;
}

export function registerSchedules(program: Command, ctx: CliContext): void {
  const schedules = program.command('schedules').description('look at and steer recurring schedules');

  withFormat(withConnection(schedules.command('list').description('schedules, oldest first, a page at a time')))
    .option('--limit <n>', 'how many (1 to 1000)', positiveInt('--limit'), 50)
    .option('--after <id>', 'the page after the schedule with this id (the last id of the page before)')
    .action(async (options: { conn?: string; table?: string; format: Format; limit: number; after?: string }) => {
      const after = options.after === undefined ? undefined : assertUuid(options.after, '--after');
      await ctx.withStore(options, async ({ store }) => {
        const list = await store.scheduleList({ limit: options.limit, after });
        if (options.format === 'json') return ctx.out(json(list));
        if (list.length === 0) return ctx.out('No schedules.');
        ctx.out(
          table(
            ['ID', 'NAME', 'STATE', 'TIMING', 'NEXT FIRE', 'LAST FIRED', 'SKIPPED'],
            list.map((s) => [s.id, s.name, s.state, timing(s), iso(s.nextFireAt), iso(s.lastFiredFor), String(s.skippedTicks)]),
          ),
        );
        // A full page: there may be more, and the last id leads on.
        if (list.length === options.limit) ctx.out(`Next page: add --after ${list.at(-1)!.id} to the same command.`);
      });
    });

  const action = (verb: 'pause' | 'resume' | 'trigger', description: string) =>
    withConnection(schedules.command(verb).description(description).argument('<id>', 'the schedule id')).action(
      async (id: string, options: { conn?: string; table?: string }) => {
        const target = assertUuid(id, 'ID');
        await ctx.withStore(options, async ({ store }) => {
          const { actor } = ctx;
          if (verb === 'trigger') {
            const { id: jobId } = await store.scheduleTrigger({ scheduleId: target, actor });
            ctx.out(`Triggered schedule ${target}: occurrence ${jobId} is due now.`);
          } else {
            const schedule = verb === 'pause' ? await store.schedulePause({ scheduleId: target, actor }) : await store.scheduleResume({ scheduleId: target, actor });
            ctx.out(`Schedule ${schedule.id} (${schedule.name}) is ${schedule.state}.`);
          }
        });
      },
    );
  action('pause', 'stop minting (missed ticks follow the catch-up policy on resume)');
  action('resume', 'mint again');
  action('trigger', 'mint one occurrence now, outside the pattern');
}
