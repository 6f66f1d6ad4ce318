import type { DataSource } from 'typeorm';
import { dropInstallation } from '../mariadb.js';

/** What an installation held right after its migrate. */
interface Pristine {
  readonly kind: string;
  readonly fingerprint: string;
  readonly tables: readonly string[];
  /** Tables migrate wrote rows into, and their rows, to put back after each case. */
  readonly seeds: ReadonlyMap<string, Record<string, unknown>[]>;
}

const LIKE_PREFIX = `table_schema = DATABASE() AND table_name LIKE CONCAT(REPLACE(?, '_', '\\\\_'), '%')`;

/**
 * The MySQL store's installations (one table prefix each) migrated once and reused by later cases
 * of one test file, as PostgresSchemaPool does for schemas: a migrate and a drop cost about
 * 125 ms on MariaDB, emptying 18 small tables a few. After its case an installation's rows are
 * deleted and the rows migrate seeded put back, and it goes to a later case opened with the same
 * history policy; one whose columns changed is dropped instead. AUTO_INCREMENT counters go on
 * from where they were, as in a database that has run for a while.
 */
export class MysqlPrefixPool {
  private readonly pristine = new Map<string, Pristine>();
  private readonly free = new Map<string, string[]>();

  constructor(private readonly dataSource: DataSource) {}

  take(kind: string): string | undefined {
    return this.free.get(kind)?.pop();
  }

  async adopt(prefix: string, kind: string): Promise<void> {
    const tables = ((await this.dataSource.query(`SELECT table_name AS name FROM information_schema.tables WHERE ${LIKE_PREFIX} ORDER BY table_name`, [prefix])) as { name: string }[]).map((row) => row.name);
    const seeds = new Map<string, Record<string, unknown>[]>();
    for (const table of tables) {
      const rows = (await this.dataSource.query(`SELECT * FROM \`${table}\``)) as Record<string, unknown>[];
      if (rows.length > 0) seeds.set(table, rows);
    }
    this.pristine.set(prefix, { kind, fingerprint: await this.fingerprint(prefix), tables, seeds });
  }

  async release(prefixes: readonly string[]): Promise<void> {
    for (const prefix of prefixes) {
      const pristine = this.pristine.get(prefix);
      if (pristine === undefined || (await this.fingerprint(prefix)) !== pristine.fingerprint) {
        this.pristine.delete(prefix);
        await dropInstallation(this.dataSource, { prefix });
        continue;
      }
      await this.empty(pristine);
      const free = this.free.get(pristine.kind) ?? [];
      free.push(prefix);
      this.free.set(pristine.kind, free);
    }
  }

  /** Every installation this pool made, for teardown to drop; the pool forgets them. */
  drain(): string[] {
    const all = [...this.pristine.keys()];
    this.pristine.clear();
    this.free.clear();
    return all;
  }

  private async empty({ tables, seeds }: Pristine): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      for (const table of tables) await manager.query(`DELETE FROM \`${table}\``);
      for (const [table, rows] of seeds) {
        const columns = Object.keys(rows[0]!);
        const values = rows.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ');
        await manager.query(`INSERT INTO \`${table}\` (${columns.map((c) => `\`${c}\``).join(', ')}) VALUES ${values}`, rows.flatMap((row) => columns.map((c) => row[c])));
      }
    });
  }

  /** The installation's tables and their columns, with types. */
  private async fingerprint(prefix: string): Promise<string> {
    const [row] = (await this.dataSource.query(
      `SELECT MD5(GROUP_CONCAT(CONCAT(table_name, ':', column_name, ':', column_type) ORDER BY table_name, ordinal_position SEPARATOR ',')) AS fingerprint
       FROM information_schema.columns WHERE ${LIKE_PREFIX}`,
      [prefix],
    )) as { fingerprint: string | null }[];
    return row?.fingerprint ?? '';
  }
}
