// The chaos run's PostgreSQL: an embedded server of its own (restartable), or DATABASE_URL's, with
// fresh schemas for the chaos tables and the scheduler's. run.mjs sees only the object returned by
// openPostgres; chaos/mariadb.mjs returns the same shape for MariaDB.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { startEmbeddedPostgres } from '../scripts/embedded-postgres.mjs';

/**
 * Starts (or connects to) the server, creates the schemas and the chaos tables, migrates the
 * scheduler's and installs the lease audit, all before any process starts.
 * `dist` holds the run's snapshot of the build: { lib, checks }.
 */
export async function openPostgres({ lib, checks }) {
  const external = process.env.DATABASE_URL;
  const server = external ? null : await startEmbeddedPostgres('chaos', { onError: () => {} });
  const url = external ?? server.url;
  const pool = new pg.Pool({ connectionString: url, application_name: 'chaos-controller', max: 2 });
  pool.on('error', () => {}); // idle connections die with every restart; the next query reconnects
  const sql = async (text, params) => (await pool.query(text, params)).rows;
  const version = (await sql('SHOW server_version'))[0].server_version;
  const suffix = randomBytes(3).toString('hex');
  const names = { chaos: `chaos_${suffix}`, scheduler: `chaos_${suffix}_scheduler`, prefix: '' };
  await pool.query(checks.chaosTablesSql(names.chaos));
  const migrator = await new DataSource({ type: 'postgres', url, applicationName: 'chaos-controller' }).initialize();
  await new lib.PostgresJobStore({ dataSource: migrator, schema: names.scheduler }).migrate();
  await migrator.destroy();
  await pool.query(checks.leaseAuditSql(names));
  const s = `"${names.chaos}"`;

  return {
    store: 'postgres',
    name: 'PostgreSQL',
    server: `${version} (${external ? 'DATABASE_URL' : 'embedded'})`,
    external: Boolean(external),
    notes: external ? ['DATABASE_URL is set, so the database-restart fault is skipped (only the embedded server can be restarted).'] : [],
    names,
    dialect: checks.POSTGRES_DIALECT,
    faultKinds: ['kill_worker', 'kill_producer', 'terminate_backends', 'pause_worker', ...(server ? ['restart_db'] : [])],
    sessionCounts: { terminate_backends: 0, terminated_backends: 0, terminated_listen: 0 },
    appEnv: { CHAOS_STORE: 'postgres', CHAOS_DATABASE_URL: url, CHAOS_SCHEMA: names.chaos, CHAOS_SCHEDULER_SCHEMA: names.scheduler },
    sql,
    restart: server ? (o) => server.restart(o) : null,

    /** Live leases per worker: how many, and how many on a job's last attempt. */
    leases: () =>
      sql(`SELECT worker_id, count(*)::int AS n, count(*) FILTER (WHERE attempt >= max_attempts)::int AS final
           FROM "${names.scheduler}".jobs WHERE state = 'running' AND leased_until > now() GROUP BY worker_id`),

    /** Committed jobs not yet terminal. */
    unfinished: async () =>
      Number(
        (
          await sql(`SELECT count(*) AS n FROM ${s}.enqueued e LEFT JOIN "${names.scheduler}".jobs j ON j.id = e.job_id
                     WHERE j.id IS NULL OR j.state NOT IN ('succeeded', 'dead_lettered', 'cancelled', 'quarantined')`)
        )[0].n,
      ),

    /** pg_terminate_backend on 1-3 of the app's connections; one time in three, only LISTEN connections. */
    async killSessions({ random, pick }) {
      const rows = await sql(
        `SELECT pid, application_name, query FROM pg_stat_activity
         WHERE datname = current_database() AND application_name LIKE 'chaos-%' AND pid <> pg_backend_pid()`,
      );
      const listenOnly = random.next() < 1 / 3;
      const candidates = listenOnly ? rows.filter((r) => /^LISTEN/i.test(r.query ?? '')) : rows;
      if (candidates.length === 0) throw new Error('no app connection');
      const victims = new Map();
      const n = 1 + Math.floor(random.next() * 3);
      for (let i = 0; i < n; i += 1) {
        const row = pick(candidates);
        victims.set(row.pid, row);
      }
      for (const row of victims.values()) await sql('SELECT pg_terminate_backend($1)', [row.pid]);
      const listen = [...victims.values()].filter((r) => /^LISTEN/i.test(r.query ?? '')).length;
      return {
        counts: { terminate_backends: 1, terminated_backends: victims.size, terminated_listen: listen },
        line: `pg_terminate_backend x${victims.size} (${listen} LISTEN): ${[...victims.values()].map((r) => r.application_name).join(', ')}`,
      };
    },

    /** Inserts rows through unnest, a few thousand per statement; instants are epoch milliseconds. */
    async insertRows(table, columns, rows) {
      for (let i = 0; i < rows.length; i += 2_000) {
        const chunk = rows.slice(i, i + 2_000);
        const params = columns.map(([name]) => chunk.map((row) => row[name]));
        const unnest = columns.map(([, type], j) => `$${j + 1}::${type === 'timestamptz' ? 'double precision' : type}[]`).join(', ');
        const select = columns.map(([name, type]) => (type === 'timestamptz' ? `CASE WHEN ${name} IS NULL THEN NULL ELSE to_timestamp(${name} / 1000.0) END` : name)).join(', ');
        await sql(
          `INSERT INTO ${s}.${table} (${columns.map(([name]) => name).join(', ')})
           SELECT ${select} FROM unnest(${unnest}) AS r(${columns.map(([name]) => name).join(', ')})`,
          params,
        );
      }
    },

    /** A checked table's rows, for the dump of a failed run. */
    async tableRows(owner, table) {
      const schema = names[owner];
      const [{ rows }] = await sql(`SELECT coalesce(json_agg(t), '[]') AS rows FROM "${schema}"."${table}" t`);
      return { name: `${schema}.${table}`, rows };
    },

    /** verifyHistory (docs/verify.md) over the scheduler's own tables, through a store of its own. */
    async verify() {
      const dataSource = await new DataSource({ type: 'postgres', url, applicationName: 'chaos-controller', extra: { max: 2 } }).initialize();
      const store = new lib.PostgresJobStore({ dataSource, schema: names.scheduler });
      try {
        return await lib.verifyHistory(store);
      } finally {
        await store.close();
        await dataSource.destroy();
      }
    },

    /** Ends the controller's pool; drops the schemas of an external server when asked; stops the embedded server. */
    async close({ drop }) {
      await pool.end();
      if (external && drop) {
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        await admin.query(`DROP SCHEMA "${names.chaos}" CASCADE; DROP SCHEMA "${names.scheduler}" CASCADE`);
        await admin.end();
      }
      await server?.stop();
    },

    /** Whatever went wrong, leave no server behind. */
    abort: () => server?.stop(),
  };
}
