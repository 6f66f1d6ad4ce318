import { PostgresJobStore, type PostgresJobStoreOptions } from '../../../lib/store/index.js';
import type { ConformanceTarget } from '../../../lib/store-kit/conformance/index.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../postgres.js';
import { PostgresSchemaPool } from './postgres-schema-pool.js';

/**
 * One DataSource per test file; each opened store gets a schema of its own, closed and emptied
 * after its case and handed to a later case (see PostgresSchemaPool: a migrate cost more than
 * the case), and every schema is dropped at teardown.
 */
export async function postgresTarget(
  through: { readonly url?: string; readonly name?: string; readonly store?: Pick<PostgresJobStoreOptions, 'poolMode' | 'preparedStatements' | 'listenUrl'> } = {},
): Promise<ConformanceTarget> {
  // Every store that has sent a heartbeat keeps a connection of its own until it is closed (its
  // dedicated heartbeat client), and a case may heartbeat from several stores.
  const dataSource = await openPostgresDataSource(48, through.url);
  const pool = new PostgresSchemaPool(dataSource);
  let stores: PostgresJobStore[] = [];
  const discard = async () => {
    const closing = stores;
    stores = [];
    await Promise.all(closing.map((store) => store.close()));
    await pool.release(closing.map((store) => store.naming.schema));
  };
  return {
    name: through.name ?? 'postgres',
    async open(options) {
      const kind = options?.historyPolicy ?? 'default';
      const reused = pool.take(kind);
      const schema = reused ?? uniqueSchema('conf');
      const store = new PostgresJobStore({ dataSource, schema, limits: options?.limits, historyPolicy: options?.historyPolicy, finish: options?.finish, ...through.store });
      stores.push(store);
      // On a reused schema this finds every migration applied and the install current: a few reads.
      await store.migrate();
      if (reused === undefined) await pool.adopt(schema, kind);
      const { jobs, queues, schedules, audit, history, dependencies, limits, slots, cursors, maintenance, nodes, rateLimits, rateStarts } = store.naming;
      return {
        store,
        advance: async (ms) => {
          const shift = `$1 * interval '1 millisecond'`;
          await dataSource.query(
            `UPDATE ${jobs} SET run_at = run_at - ${shift}, leased_until = leased_until - ${shift}, created_at = created_at - ${shift},
               updated_at = updated_at - ${shift}, finished_at = finished_at - ${shift}, window_ends_at = window_ends_at - ${shift}`,
            [ms],
          );
          await dataSource.query(`UPDATE ${slots} SET held_until = held_until - ${shift}`, [ms]);
          await dataSource.query(`UPDATE ${rateStarts} SET used_at = used_at - ${shift}`, [ms]);
          await dataSource.query(
            `UPDATE ${cursors} SET leased_until = leased_until - ${shift}, retry_at = retry_at - ${shift}, updated_at = updated_at - ${shift}`,
            [ms],
          );
          await dataSource.query(`UPDATE ${maintenance} SET leased_until = leased_until - ${shift}, updated_at = updated_at - ${shift}`, [ms]);
          await dataSource.query(
            `UPDATE ${nodes} SET started_at = started_at - ${shift}, last_seen_at = last_seen_at - ${shift}, stopped_at = stopped_at - ${shift}`,
            [ms],
          );
          await dataSource.query(
            `UPDATE ${schedules} SET next_fire_at = next_fire_at - ${shift}, anchor_at = anchor_at - ${shift}, last_fired_for = last_fired_for - ${shift},
               last_skipped_for = last_skipped_for - ${shift}, created_at = created_at - ${shift}, updated_at = updated_at - ${shift}`,
            [ms],
          );
        },
        snapshot: async () => {
          const [row] = await dataSource.query(
            `SELECT (SELECT coalesce(jsonb_agg(to_jsonb(j) ORDER BY j.seq), '[]') FROM ${jobs} j) AS jobs,
                    (SELECT coalesce(jsonb_agg(to_jsonb(q) ORDER BY q.name), '[]') FROM ${queues} q) AS queues,
                    (SELECT coalesce(jsonb_agg(to_jsonb(s) ORDER BY s.id), '[]') FROM ${schedules} s) AS schedules,
                    (SELECT count(*) FROM ${audit}) AS audit,
                    (SELECT count(*) FROM ${history}) AS history,
                    (SELECT coalesce(jsonb_agg(to_jsonb(d) ORDER BY d.child_id, d.parent_id), '[]') FROM ${dependencies} d) AS dependencies,
                    (SELECT coalesce(jsonb_agg(to_jsonb(l) ORDER BY l.key), '[]') FROM ${limits} l) AS limits,
                    (SELECT coalesce(jsonb_agg(to_jsonb(s) ORDER BY s.key, s.slot), '[]') FROM ${slots} s) AS slots,
                    (SELECT coalesce(jsonb_agg(to_jsonb(r) ORDER BY r.key), '[]') FROM ${rateLimits} r) AS rate_limits,
                    (SELECT coalesce(jsonb_agg(to_jsonb(r) ORDER BY r.key, r.n), '[]') FROM ${rateStarts} r) AS rate_starts,
                    (SELECT coalesce(jsonb_agg(to_jsonb(c) ORDER BY c.observer), '[]') FROM ${cursors} c) AS cursors`,
          );
          return row;
        },
        countJobs: async () => Number((await dataSource.query(`SELECT count(*) AS n FROM ${jobs}`))[0].n),
        hostTransaction: (work) => dataSource.transaction(work),
      };
    },
    cleanup: discard,
    async teardown() {
      await discard();
      await dropSchemas(dataSource, pool.drain());
      await dataSource.destroy();
    },
  };
}
