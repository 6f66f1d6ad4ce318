import { hostname, userInfo } from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import { connect, type Connection, type ConnectionOptions } from './connection.js';
import { parseFormat, type Format } from './output.js';

/** What every command needs: where to print, who acts, and a way to reach the store. */
export interface CliContext {
  out(text: string): void;
  /** The environment the CLI reads: `DATABASE_URL` when there is no --conn, `DASHBOARD_TOKEN`. */
  readonly env: NodeJS.ProcessEnv;
  /** The actor written to the audit log for operator actions. */
  readonly actor: string;
  withStore<T>(options: ConnectionOptions, work: (connection: Connection) => Promise<T>, settings?: { create?: boolean }): Promise<T>;
}

export function defaultActor(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no user database entry (some containers); keep "unknown"
  }
  // The audit log keeps an actor of at most 200 characters.
  return `cli:${user}@${hostname()}`.slice(0, 200);
}

export function createContext(out: (text: string) => void, env: NodeJS.ProcessEnv): CliContext {
  return {
    out,
    env,
    actor: defaultActor(),
    async withStore(options, work, settings) {
      const connection = await connect(options, settings, env);
      try {
        return await work(connection);
      } finally {
        await connection.close();
      }
    },
  };
}

/** Adds --conn and --table, which every command that touches the database takes. */
export function withConnection(command: Command): Command {
  return command
    .option('--conn <url>', 'postgres://user@host/db, mysql://user@host/db, mariadb://user@host/db or sqlite:PATH (default: DATABASE_URL)')
    .option('--table <name>', 'the jobs table: [schema.]<prefix>jobs on PostgreSQL, [database.]<prefix>jobs on MySQL, <prefix>jobs on SQLite');
}

/** Adds --format text|json. */
export function withFormat(command: Command): Command {
  return command.addOption(new Option('--format <format>', 'text or json').default('text').argParser(parseFormat));
}

/** Parses a positive whole number option, at most `max` (1,000 unless the store takes fewer). */
export function positiveInt(name: string, max = 1_000) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`${name} must be a whole number from 1 to ${max}, got "${value}".`);
    return n;
  };
}

export type { Format };

/** An ISO 8601 instant with its zone (`2026-12-06T01:00:00Z`), for a range option; anything else is a usage error. */
export function isoInstant(name: string) {
  return (value: string): Date => {
    const at = /^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d{1,3})?)?(Z|[+-]\d\d:\d\d))?$/.test(value) ? new Date(value) : new Date(Number.NaN);
    if (Number.isNaN(at.getTime())) throw new InvalidArgumentError(`${name} must be an ISO 8601 instant such as 2026-12-06T01:00:00Z, got "${value}".`);
    return at;
  };
}
