// One reading per window: the backlog (the system's own remainingSql), the jobs table's live and
// dead tuples and its autovacuum count (with its partitions: pg-boss 10 keeps each queue's jobs in
// a partition of pgboss.job), dead tuples over the whole schema, and how far back the oldest client
// session holds the horizon (autovacuum workers are left out: vacuum's own xmin holds nothing back).
import pg from 'pg';

const SQL = `
  WITH rel AS (SELECT $1::regclass AS relid UNION ALL SELECT inhrelid FROM pg_inherits WHERE inhparent = $1::regclass),
       jobs AS (SELECT coalesce(sum(n_dead_tup), 0)::bigint AS dead, coalesce(sum(n_live_tup), 0)::bigint AS live, coalesce(sum(autovacuum_count), 0)::int AS autovacuums
                  FROM pg_stat_user_tables WHERE relid IN (SELECT relid FROM rel)),
       clients AS (SELECT max(greatest(age(backend_xid), age(backend_xmin))) AS xids, greatest(0, extract(epoch FROM now() - min(xact_start))) AS seconds
                     FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid())
  SELECT jobs.*, (SELECT coalesce(sum(n_dead_tup), 0)::bigint FROM pg_stat_user_tables WHERE schemaname = $2) AS schema_dead,
         coalesce(clients.xids, 0) AS horizon_xids, coalesce(clients.seconds, 0)::float AS oldest_xact_s
    FROM jobs, clients`;

/** db: a cell from peers/cell.mjs Server.database; table: schema-qualified jobs table. */
export async function openProbe(db, table) {
  const client = new pg.Client(db.url);
  client.on('error', () => {});
  await client.connect();
  const schema = table.split('.')[0];
  return {
    async sample() {
      const depth = await db.remaining();
      const { rows } = await client.query(SQL, [table, schema]);
      const r = rows[0];
      return { depth, jobsDead: Number(r.dead), jobsLive: Number(r.live), autovacuums: r.autovacuums, schemaDead: Number(r.schema_dead), horizonXids: r.horizon_xids, oldestXactS: r.oldest_xact_s };
    },
    close: () => client.end(),
  };
}
