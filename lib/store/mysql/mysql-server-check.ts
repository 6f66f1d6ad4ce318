import type { DataSource } from 'typeorm';
import { StoreUnavailableError } from '../../core/index.js';
import type { MysqlExecutor } from './mysql-executor.js';

/** Which server the store talks to, from `SELECT VERSION()`. */
export interface MysqlServer {
  readonly flavour: 'mariadb' | 'mysql';
  readonly version: readonly [number, number, number];
  /** As the server reports it, e.g. '10.11.19-MariaDB-0+deb12u1'. */
  readonly text: string;
}

/** The oldest servers with `FOR UPDATE SKIP LOCKED`, which the claim is built on. */
const OLDEST: Record<MysqlServer['flavour'], readonly [number, number, number]> = { mariadb: [10, 6, 0], mysql: [8, 0, 1] };

/** Reads a server's VERSION() text. */
export function parseServerVersion(text: string): MysqlServer {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(text);
  const version = (match ? [Number(match[1]), Number(match[2]), Number(match[3])] : [0, 0, 0]) as [number, number, number];
  return { flavour: /mariadb/i.test(text) ? 'mariadb' : 'mysql', version, text };
}

/** Refuses a server without SKIP LOCKED, in one sentence that names the oldest one that has it. */
export function assertServerSupported(server: MysqlServer): void {
  const oldest = OLDEST[server.flavour];
  const older = server.version[0] !== oldest[0] ? server.version[0] < oldest[0] : server.version[1] !== oldest[1] ? server.version[1] < oldest[1] : server.version[2] < oldest[2];
  if (older) {
    const name = server.flavour === 'mariadb' ? 'MariaDB' : 'MySQL';
    throw new StoreUnavailableError(
      `The server is ${name} ${server.version.join('.')}, and the store needs ${name} ${oldest.join('.')} or later, the first with FOR UPDATE SKIP LOCKED, on which its claim is built.`,
    );
  }
}

/**
 * Reads the server's version on one of the store's sessions and refuses one the store cannot run
 * on, or a database that is not there (`database`, or the session's own when null).
 */
export async function checkServer(db: MysqlExecutor, database: string | null): Promise<MysqlServer> {
  const [row] = await db.query<{ version: string; name: string | null; found: number }>(
    `SELECT VERSION() AS version, COALESCE(?, DATABASE()) AS name,
            (SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = COALESCE(?, DATABASE())) AS found`,
    [database, database],
  );
  const server = parseServerVersion(String(row?.version ?? ''));
  assertServerSupported(server);
  if (row?.name == null) {
    throw new StoreUnavailableError("The DataSource names no database and the store was given none; set the DataSource's database, or the store's database option.");
  }
  if (Number(row.found) === 0) {
    throw new StoreUnavailableError(`The database ${JSON.stringify(row.name)} does not exist on the server; create it, or name another.`);
  }
  return server;
}

/**
 * Refuses a DataSource whose sessions cannot carry every character a payload may hold. The store's
 * own sessions always use utf8mb4, but an enqueue in the host's transaction, and an attempt's
 * EntityManager, write on the DataSource's sessions, whose character set is the DataSource's
 * `charset` option: with utf8 (utf8mb3) MySQL rejects or mangles 4-byte characters such as emoji.
 */
export async function checkHostSessions(dataSource: DataSource): Promise<void> {
  const [row] = (await dataSource.query('SELECT @@character_set_client AS client, @@character_set_connection AS connection')) as { client: string; connection: string }[];
  const sets = [row?.client, row?.connection].map((value) => String(value ?? '').toLowerCase());
  const wrong = sets.find((set) => set !== 'utf8mb4');
  if (wrong !== undefined) {
    throw new StoreUnavailableError(
      `The DataSource's sessions use the character set ${JSON.stringify(wrong)}, which cannot hold the 4-byte characters (such as emoji) that job payloads may carry; set its charset option to 'utf8mb4' (or leave it unset).`,
    );
  }
}
