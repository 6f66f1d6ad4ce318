import type { Command } from 'commander';
import { JOB_STATES } from '../../core/index.js';
import { withConnection, withFormat, type CliContext, type Format } from '../cli-context.js';
import { json, table } from '../output.js';

function age(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1_000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

export function registerStats(program: Command, ctx: CliContext): void {
  withFormat(withConnection(program.command('stats').description('job counts per queue and state, and the age of the oldest due job'))).action(
    async (options: { conn?: string; table?: string; format: Format }) => {
      await ctx.withStore(options, async ({ store }) => {
        const stats = await store.jobStats();
        const oldestDueAgeMs = stats.oldestDueAt === null ? null : stats.now.getTime() - stats.oldestDueAt.getTime();
        if (options.format === 'json') return ctx.out(json({ counts: stats.counts, oldestDueAt: stats.oldestDueAt, oldestDueAgeMs }));
        const queues = [...new Set(stats.counts.map((c) => c.queue))];
        const count = (queue: string, state: string) => String(stats.counts.find((c) => c.queue === queue && c.state === state)?.count ?? 0);
        const rows = queues.map((queue) => [queue, ...JOB_STATES.map((state) => count(queue, state))]);
        ctx.out(queues.length === 0 ? 'No jobs.' : table(['QUEUE', ...JOB_STATES.map((s) => s.toUpperCase())], rows));
        ctx.out(oldestDueAgeMs === null ? 'No job is waiting.' : `Oldest due job has waited ${age(oldestDueAgeMs)}.`);
      });
    },
  );
}
