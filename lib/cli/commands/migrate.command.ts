import type { Command } from 'commander';
import { LATEST_SCHEMA_VERSION } from '../../store/sql-migrations.js';
import { withConnection, type CliContext } from '../cli-context.js';

export function registerMigrate(program: Command, ctx: CliContext): void {
  withConnection(program.command('migrate').description('create or upgrade the scheduler tables')).action(async (options: { conn?: string; table?: string }) => {
    await ctx.withStore(
      options,
      async ({ store, target }) => {
        const before = await store.schemaVersion();
        await store.migrate();
        ctx.out(
          before === LATEST_SCHEMA_VERSION
            ? `${target} is already at schema version ${LATEST_SCHEMA_VERSION}.`
            : `Migrated ${target} from schema version ${before ?? 0} to ${LATEST_SCHEMA_VERSION}.`,
        );
      },
      { create: true },
    );
  });
}
