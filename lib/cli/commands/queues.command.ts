import type { Command } from 'commander';
import { assertQueueName } from '../../core/index.js';
import { withConnection, type CliContext } from '../cli-context.js';

export function registerQueues(program: Command, ctx: CliContext): void {
  const queues = program.command('queues').description('pause and resume queues');
  for (const verb of ['pause', 'resume'] as const) {
    withConnection(queues.command(verb).description(verb === 'pause' ? 'stop claims from a queue; its jobs keep their places' : 'let workers claim from a queue again').argument('<name>', 'the queue'))
      .action(async (name: string, options: { conn?: string; table?: string }) => {
        const queue = assertQueueName(name, 'queue');
        await ctx.withStore(options, async ({ store }) => {
          if (verb === 'pause') await store.queuePause(queue, { actor: ctx.actor });
          else await store.queueResume(queue, { actor: ctx.actor });
          ctx.out(`Queue ${queue} is ${verb === 'pause' ? 'paused' : 'running'}.`);
        });
      });
  }
}
