import type { Command } from 'commander';
import { withConnection, withFormat, type CliContext, type Format } from '../cli-context.js';
import { json } from '../output.js';
import { queueTable } from '../queue-table.js';
import { whatIsKept } from '../../dashboard/http/what-is-kept.js';

function age(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1_000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

export function registerStats(program: Command, ctx: CliContext): void {
  withFormat(
    withConnection(
      program.command('stats').description('job counts per queue and state, which queues are paused, the age of the oldest due job, and what becomes of a job that succeeds'),
    ),
  ).action(
    async (options: { conn?: string; table?: string; format: Format }) => {
      await ctx.withStore(options, async ({ store }) => {
        const stats = await store.jobStats();
        const queues = await store.queueList();
        const pausedQueues = queues.filter((q) => q.paused).map((q) => q.name);
        const oldestDueAgeMs = stats.oldestDueAt === null ? null : stats.now.getTime() - stats.oldestDueAt.getTime();
        // The nodes' registry rows say whether their stores delete the successes nothing needs (the lean finish).
        const kept = whatIsKept(await store.nodeList({ limit: 1_000 }), stats.now);
        if (options.format === 'json') {
          return ctx.out(json({ counts: stats.counts, pausedQueues, oldestDueAt: stats.oldestDueAt, oldestDueAgeMs, runningNodes: kept.running, leanNodes: kept.lean }));
        }
        ctx.out(queues.length === 0 ? 'No jobs.' : queueTable(queues));
        ctx.out(oldestDueAgeMs === null ? 'No job is waiting.' : `Oldest due job has waited ${age(oldestDueAgeMs)}.`);
        ctx.out(kept.sentence);
      });
    },
  );
}
