import type { DataSource } from 'typeorm';
import { dropSchemas } from '../postgres.js';

/** What a schema held right after its migrate: the catalog's fingerprint and the rows of the tables migrate seeded. */
interface Pristine {
  readonly kind: string;
  readonly fingerprint: string;
  readonly tables: readonly string[];
  readonly seeds: ReadonlyMap<string, unknown[]>;
}

/**
 * Schemas migrated once and reused by later cases of one test file. A migrate into a fresh schema
 * costs about 130 ms of server time on a quiet machine (a drop another 20), more than most
 * conformance cases take; emptying a schema's tables costs a few milliseconds. So a case's
 * schemas are emptied after it and handed to later cases opened with the same history policy
 * (the install's triggers depend on it).
 *
 * Emptied means every row deleted, then the rows migrate seeded put back as they were (the
 * migrations and install records included, so a case that rewrote them leaves no trace). DELETE,
 * not TRUNCATE: TRUNCATE makes new files for every table and index, which cost half a migrate.
 * Identity columns are not restarted, as in a database that has run for a while. A schema whose
 * catalog (tables, columns, functions, triggers) differs from what its migrate made is dropped
 * instead of reused, and so is one that has held more than {@link REUSE_JOBS_MAX} jobs in all:
 * the rows a DELETE removes leave their index entries until vacuum, and a claim that passes more
 * than a thousand dead entries in the claim index takes it for a held horizon and reads from its
 * cursor (claim-cursor.ts), deferring lapsed leases, which a fresh schema's case would not see.
 */
/** The most jobs a schema may have held in all and still be reused (see PostgresSchemaPool). */
const REUSE_JOBS_MAX = 300;

export class PostgresSchemaPool {
  private readonly pristine = new Map<string, Pristine>();
  private readonly free = new Map<string, string[]>();

  constructor(private readonly dataSource: DataSource) {}

  /** A schema emptied after an earlier case, migrated for `kind`; undefined when none is free. */
  take(kind: string): string | undefined {
    return this.free.get(kind)?.pop();
  }

  /** Records a freshly migrated schema as it stands, so it can be reused once its case ends. */
  async adopt(schema: string, kind: string): Promise<void> {
    const tables = ((await this.dataSource.query(`SELECT relname FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind IN ('r', 'p') ORDER BY relname`, [schema])) as { relname: string }[]).map(
      (row) => row.relname,
    );
    const seeds = new Map<string, unknown[]>();
    for (const table of tables) {
      const [{ rows }] = await this.dataSource.query(`SELECT coalesce(json_agg(t), '[]') AS rows FROM "${schema}"."${table}" t`);
      if ((rows as unknown[]).length > 0) seeds.set(table, rows as unknown[]);
    }
    this.pristine.set(schema, { kind, fingerprint: await this.fingerprint(schema), tables, seeds });
  }

  /** Empties these schemas (their stores closed) for later cases; one whose catalog changed is dropped. */
  async release(schemas: readonly string[]): Promise<void> {
    const dropping: string[] = [];
    for (const schema of schemas) {
      const pristine = this.pristine.get(schema);
      if (pristine === undefined || (await this.jobsEver(schema, pristine)) > REUSE_JOBS_MAX || (await this.fingerprint(schema)) !== pristine.fingerprint) {
        this.pristine.delete(schema);
        dropping.push(schema);
        continue;
      }
      await this.empty(schema, pristine);
      const free = this.free.get(pristine.kind) ?? [];
      free.push(schema);
      this.free.set(pristine.kind, free);
    }
    await dropSchemas(this.dataSource, dropping);
  }

  /** Every schema this pool made, free or not, for teardown to drop; the pool forgets them. */
  drain(): string[] {
    const all = [...this.pristine.keys()];
    this.pristine.clear();
    this.free.clear();
    return all;
  }

  private async empty(schema: string, { tables, seeds }: Pristine): Promise<void> {
    const name = (table: string) => `"${schema}"."${table}"`;
    // The jobs first: its triggers write the counts and the history, deleted after it. A second
    // pass takes whatever the first one's triggers wrote.
    const order = [...tables].sort((a, b) => Number(b === 'jobs') - Number(a === 'jobs'));
    const deletes = order.map((table) => `DELETE FROM ${name(table)};`).join(' ');
    await this.dataSource.transaction(async (manager) => {
      await manager.query(`${deletes} ${deletes}`);
      for (const [table, rows] of seeds) {
        await manager.query(`INSERT INTO ${name(table)} OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_recordset(NULL::${name(table)}, $1)`, [JSON.stringify(rows)]);
      }
    });
  }

  /** How many jobs the schema's jobs table has held in all: its identity sequence, which emptying does not restart. */
  private async jobsEver(schema: string, { tables }: Pristine): Promise<number> {
    if (!tables.includes('jobs')) return 0;
    const [{ n }] = await this.dataSource.query(`SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence($1, 'seq')), 0) AS n`, [`"${schema}"."jobs"`]);
    return Number(n);
  }

  /** The schema's tables and their column counts, its functions' bodies and its triggers. */
  private async fingerprint(schema: string): Promise<string> {
    const [{ fingerprint }] = await this.dataSource.query(
      `SELECT md5(coalesce((SELECT string_agg(c.relname || ':' || c.relkind::text || ':' || c.relnatts, ',' ORDER BY c.relname) FROM pg_class c WHERE c.relnamespace = n.oid), '')
         || '|' || coalesce((SELECT string_agg(p.proname || ':' || md5(p.prosrc), ',' ORDER BY p.proname, md5(p.prosrc)) FROM pg_proc p WHERE p.pronamespace = n.oid), '')
         || '|' || coalesce((SELECT string_agg(t.tgname || ':' || t.tgenabled::text, ',' ORDER BY t.tgname) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = n.oid), '')) AS fingerprint
       FROM pg_namespace n WHERE n.nspname = $1`,
      [schema],
    );
    return fingerprint as string;
  }
}
