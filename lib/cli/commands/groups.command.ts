import type { Command } from 'commander';
import { MAX_GROUP_PAGE } from '../../store/checked/store-params.js';
import type { WaitingGroup } from '../../store/index.js';
import { CliError } from '../cli-error.js';
import { positiveInt, withConnection, withFormat, type CliContext, type Format } from '../cli-context.js';
import { iso, json, oneLine, nextPageAfter, table } from '../output.js';

/** The migration that adds the group index the listing reads (0025): without it, each count would walk the whole scheduled backlog. */
const GROUP_LISTING_SCHEMA = 25;

/** A count the store stopped at its cap, as `1000+`. */
function count(n: number, capped: boolean): string {
  return `${n}${capped ? '+' : ''}`;
}

export function registerGroups(program: Command, ctx: CliContext): void {
  const groups = program.command('groups').description('look at fair groups: the groups (tenants) whose jobs take turns when claimed');

  withFormat(withConnection(groups.command('list').description('groups with waiting jobs, by name, a page at a time: due and later jobs (counted up to 1000), the oldest due run time, the cap')))
    .option('--limit <n>', `how many (1 to ${MAX_GROUP_PAGE})`, positiveInt('--limit', MAX_GROUP_PAGE), 50)
    .option('--after <group>', 'the page after this group (the last group of the page before)')
    .action(async (options: { conn?: string; table?: string; format: Format; limit: number; after?: string }) => {
      await ctx.withStore(options, async ({ store, target }) => {
        const version = await store.schemaVersion();
        if (version !== null && version < GROUP_LISTING_SCHEMA) {
          throw new CliError(`The scheduler tables at ${target} are at schema version ${version}, and listing groups needs ${GROUP_LISTING_SCHEMA}; run "durable-scheduler migrate" first.`);
        }
        const list: WaitingGroup[] = await store.jobListGroups({ limit: options.limit, ...(options.after === undefined ? {} : { after: options.after }) });
        // A full page may have more after it; its last group leads on.
        const next = list.length === options.limit ? list.at(-1)!.group : null;
        if (options.format === 'json') return ctx.out(json({ groups: list, next }));
        if (list.length === 0) return ctx.out(options.after === undefined ? 'No group has waiting jobs.' : 'No group with waiting jobs after that one.');
        ctx.out(
          table(
            ['GROUP', 'DUE', 'OLDEST DUE', 'LATER', 'CAP'],
            list.map((g) => [oneLine(g.group, 60), count(g.due, g.dueCapped), iso(g.oldestDueAt), count(g.later, g.laterCapped), g.concurrencyMax === null ? '-' : String(g.concurrencyMax)]),
          ),
        );
        if (next !== null) ctx.out(nextPageAfter(next, 'group'));
      });
    });
}
