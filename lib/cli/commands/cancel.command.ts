import type { Command } from 'commander';
import { assertUuid } from '../../core/index.js';
import { withConnection, type CliContext } from '../cli-context.js';

const SAID = {
  cancelled: 'cancelled',
  cancel_requested: 'running; it was asked to stop and ends cancelled when its attempt stops',
  already_cancelled: 'already cancelled; nothing changed',
  already_requested: 'running and was already asked to stop; nothing changed',
} as const;

export function registerCancel(program: Command, ctx: CliContext): void {
  withConnection(program.command('cancel').description('cancel a waiting job, ask a running one to stop, or discard a dead letter').argument('<id>', 'the job id')).action(
    async (id: string, options: { conn?: string; table?: string }) => {
      const target = assertUuid(id, 'ID');
      await ctx.withStore(options, async ({ store }) => {
        const { job, outcome } = await store.jobCancel({ jobId: target, actor: ctx.actor });
        ctx.out(`Job ${job.id} (${job.name}) is ${SAID[outcome]}.`);
      });
    },
  );
}
