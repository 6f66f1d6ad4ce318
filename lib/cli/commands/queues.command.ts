import type { Command } from 'commander';
import { assertQueueName } from '../../core/index.js';
import { withConnection, withFormat, type CliContext, type Format } from '../cli-context.js';
import { json } from '../output.js';
import { queueTable } from '../queue-table.js';

export function registerQueues(program: Command, ctx: CliContext): void {
  const queues = program.command('queues').description('list, pause and resume queues');

  withFormat(withConnection(queues.command('list').description('queues with a stored job or a pause, by name: paused or not, and jobs per state')))
    .option('--paused', 'only paused queues')
    .action(async (options: { conn?: string; table?: string; format: Format; paused?: boolean }) => {
      await ctx.withStore(options, async ({ store }) => {
        const list = (await store.queueList()).filter((q) => !options.paused || q.paused);
        if (options.format === 'json') return ctx.out(json(list));
        ctx.out(list.length === 0 ? (options.paused ? 'No queue is paused.' : 'No queues.') : queueTable(list));
      });
    });

  for (const verb of ['pause', 'resume'] as const) {
    withConnection(queues.command(verb).description(verb === 'pause' ? 'stop claims from a queue; its jobs keep their places' : 'let workers claim from a queue again').argument('<name>', 'the queue'))
      .action(async (name: string, options: { conn?: string; table?: string }) => {
        const queue = assertQueueName(name, 'queue');
        await ctx.withStore(options, async ({ store }) => {
          if (verb === 'pause') await store.queuePause({ queue, actor: ctx.actor });
          else await store.queueResume({ queue, actor: ctx.actor });
          const said = `Queue ${queue} is ${verb === 'pause' ? 'paused' : 'running'}`;
          // A queue may be paused ahead of its first job, so an unused name is not refused; but a
          // typo would otherwise look like success, so say that no job is in it. The kept counts
          // answer that at once, where a listing filtered on a rare queue may stop short.
          const used = Object.keys((await store.queueList()).find((q) => q.name === queue)?.counts ?? {}).length > 0;
          const hint = verb === 'pause' ? ' (a queue can be paused before its first job)' : '';
          ctx.out(used ? `${said}.` : `${said}, but no stored job is in that queue; check the name${hint}.`);
        });
      });
  }
}
