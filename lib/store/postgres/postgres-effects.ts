import { ALL_PARENTS_SUCCEEDED, type HistoryPolicy } from '../../core/index.js';
import { limitFunction } from './postgres-limits.js';
import { FINISH_HINT } from '../wake-hints.js';
import type { PostgresNaming } from './postgres-naming.js';

/**
 * Edges one statement settles at most, its whole cascade counted (a fan-out, and the dependants of
 * the dependants it cancels); the rest is finished by jobSettleDependencies.
 */
export const INLINE_SETTLE_LIMIT = 1_000;

/**
 * Edges a statement may settle on top of {@link INLINE_SETTLE_LIMIT} for each job it ended: a job
 * of a batch has an edge to each of its batch's (up to three) callbacks, so an outcome write of any
 * number of batch jobs settles them all itself, and the write that ends a batch releases its
 * callbacks however many jobs it reports.
 */
export const SETTLE_EDGES_PER_ENDED_JOB = 3;

const TERMINAL = `('succeeded', 'dead_lettered', 'cancelled', 'quarantined')`;
const DEAD_LETTER = `('dead_lettered', 'quarantined')`;
/** Set while the settle function runs, so that the trigger its own updates fire does not settle too. */
const SETTLING = 'durable_scheduler.settling';
/**
 * Set, for its transaction, by an outcome write under the `lean` finish, to the jobs table it writes:
 * the effects trigger of that installation then deletes the successes nothing needs.
 */
const LEAN_FINISH = 'durable_scheduler.lean_finish';

/** The expression an outcome write under the `lean` finish evaluates before it writes (complete-jobs.query.ts). */
export function leanFinishSetting(t: PostgresNaming): string {
  return `set_config('${LEAN_FINISH}', ${quoteLiteral(t.jobs)}, true)`;
}

function quoteLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * Of the pairs of an outcome write under the `lean` finish: the successes nothing needs, which the
 * trigger deletes instead of logging (docs/stores.md#lean-finish). A job is kept when it
 * - has a dependant: any edge names it as parent, settled or not (a dependant may read its output
 *   through jobParentOutput, and an edge is how the dependant finds its parent);
 * - has output: anything but SQL NULL or JSON null;
 * - holds a unique key, opened a throttle window (the window lives in the opener's row), or is in a
 *   sequence (it may be the tail its key's next enqueue runs after; retention deletes it with that row);
 * - is needed by an observer whose cursor's filter matches its name (a cursor with no filter, one
 *   leased by an earlier release, matches everything): one that hears `succeeded`, or one that has
 *   yet to be fed an entry of this job in a state it hears, after its position in the log.
 * Each test is a scalar subquery, never a NOT EXISTS: the trigger function turns nested loops off
 * (see jobs_after_update), and a NOT EXISTS would become an anti join that hashes every edge. As a
 * subquery each is one probe per success: the edges through their parent index, the job's history
 * through its (job_id, id) index, and the cursors, a table of one row per observer.
 */
function leanCandidates(t: PostgresNaming): string {
  return `SELECT p.id FROM pairs p
    WHERE p.old_state = 'running' AND p.state = 'succeeded'
      AND (p.output IS NULL OR p.output = 'null'::jsonb) AND p.unique_key IS NULL AND p.sequence_key IS NULL
      AND p.window_kind IS DISTINCT FROM 'throttle'
      AND (SELECT 1 FROM ${t.dependencies} d WHERE d.parent_id = p.id LIMIT 1) IS NULL
      AND (
        SELECT 1 FROM ${t.cursors} c
        WHERE (c.jobs IS NULL OR p.name = ANY(c.jobs))
          AND (c.states IS NULL OR 'succeeded' = ANY(c.states) OR EXISTS (
            SELECT 1 FROM ${t.history} h
            WHERE h.job_id = p.id AND h.state = ANY(c.states) AND (h.tx, h.id) > (c.last_tx, c.last_id)))
        LIMIT 1) IS NULL`;
}

/**
 * Of a dependant `c` and what a level settles of its edges (`e`): an on_failure dependant whose
 * latch this level ends with no parent failed, counting this very settle. Read from the row the
 * update writes (the newest version, once `held` locked a shared one), never from the snapshot:
 * another settler of the same dependant may have lowered its latch or recorded a failed parent.
 * Never null, so the CASEs below may negate it.
 */
const ALL_SUCCEEDED = `(c.dependency_mode IS NOT DISTINCT FROM 'on_failure' AND NOT (c.parent_failed OR e.parent_failed) AND c.pending_parents - e.satisfied <= 0)`;
/** The dependant becomes `cancelled`: a parent failed it (`on_success`), or {@link ALL_SUCCEEDED}. */
const CANCELS = `(e.failure IS NOT NULL OR ${ALL_SUCCEEDED})`;

/**
 * One level of a cascade: settles at most the edges left in the budget among those `which` picks
 * (open edges of terminal parents), and leaves in `frontier` the dependants it cancelled, whose own
 * edges are the next level (null when there are none).
 */
function settleLevel(t: PostgresNaming, which: string, fromFrontier: boolean): string {
  // From a frontier (the jobs a write just ended), each edge's parent is read by its key, in a
  // subquery the planner cannot turn into a join: as a join, statistics that predate the jobs'
  // ends (a batch written and run before autovacuum analyzed it) made it walk every terminal job
  // through the state index to find the few parents of the frontier. The sweep reads all open edges
  // of terminal parents, where the join is what it wants.
  const parents = fromFrontier
    ? `${t.dependencies} d CROSS JOIN LATERAL (SELECT p.state FROM ${t.jobs} p WHERE p.id = d.parent_id LIMIT 1) p`
    : `${t.dependencies} d JOIN ${t.jobs} p ON p.id = d.parent_id`;
  return `WITH picked AS (
      SELECT d.ctid AS edge
      FROM ${parents}
      WHERE NOT d.settled AND ${which} AND p.state IN ${TERMINAL}
        -- A sequence's next job waits while its failure holds the sequence (until the parent is
        -- replayed and ends again, or is discarded), and while the parent is still in line: it ended
        -- without running while its own sequence edge is open. A CASE, so only sequence edges probe.
        AND CASE WHEN d.sequence IS NULL THEN true
          ELSE NOT (d.sequence = 'block' AND p.state IN ${DEAD_LETTER})
            AND (SELECT 1 FROM ${t.dependencies} i WHERE i.child_id = d.parent_id AND i.sequence IS NOT NULL AND NOT i.settled LIMIT 1) IS NULL
        END
      -- No ORDER BY: with SKIP LOCKED concurrent settlers never wait on each other, so lock order does
      -- not matter, and sorting every open edge of a 10,000-child parent for each batch is waste.
      LIMIT max_edges - settled_edges
      FOR UPDATE OF d SKIP LOCKED
    ), marked AS (
      -- The locked edges by their row address, and each parent's end by its key: no join for the
      -- planner to turn into a scan of every edge.
      UPDATE ${t.dependencies} d SET settled = true
      WHERE d.ctid = ANY(ARRAY(SELECT edge FROM picked))
      RETURNING d.child_id, d.parent_id, d.sequence, (SELECT p.state FROM ${t.jobs} p WHERE p.id = d.parent_id) AS parent_state
    ), effect AS (
      SELECT m.child_id,
        -- A sequence edge releases however its parent ended (one that blocks was not picked), and so
        -- does every edge of an on_any_terminal or on_failure dependant.
        count(*) FILTER (WHERE m.parent_state = 'succeeded' OR m.sequence IS NOT NULL OR c.dependency_mode IN ('on_any_terminal', 'on_failure')) AS satisfied,
        min('parent ' || m.parent_id || ' ended ' || m.parent_state) FILTER (WHERE m.parent_state <> 'succeeded' AND m.sequence IS NULL AND c.dependency_mode = 'on_success') AS failure,
        -- An on_failure dependant remembers a parent that did not succeed (a sequence edge's is not one).
        count(*) FILTER (WHERE m.parent_state <> 'succeeded' AND m.sequence IS NULL AND c.dependency_mode = 'on_failure') > 0 AS parent_failed,
        -- An on_failure dependant no parent has failed so far, as this snapshot reads it: one this
        -- level ends with none failed is cancelled, not released.
        bool_and(c.dependency_mode IS NOT DISTINCT FROM 'on_failure' AND NOT c.parent_failed) AS unfailed,
        count(*) < min(c.pending_parents) AS shared
      FROM marked m JOIN ${t.jobs} c ON c.id = m.child_id
      GROUP BY m.child_id
    ), held AS MATERIALIZED (
      -- Locked FOR UPDATE in one pass, in id order, before any is written:
      -- - a dependant this level cancels: it becomes terminal, and every such write locks first
      --   (parent-guard.sql.ts); an on_failure one that no parent failed counts, since this level
      --   may end its latch with every parent succeeded (when it does not, it shares its edges);
      -- - a dependant another settler may write too: open edges besides the ones this level
      --   settles (its latch counts every open edge). Two settlers whose parents share dependants
      --   (one lowering their latches, one cancelling them) then wait for each other at the first
      --   shared row instead of each holding a row the other needs.
      -- A dependant whose every open edge this level holds, and that it releases or lowers, has no
      -- other settler to meet, so a fan-out of single-parent dependants pays nothing for this.
      -- Probed by key, as the edges are: a join would let the planner walk the whole primary key.
      SELECT c.id FROM ${t.jobs} c
      -- The state test is written so the state index cannot serve it (IS TRUE): the rows are found by key.
      WHERE c.id = ANY(ARRAY(SELECT child_id FROM effect WHERE shared OR failure IS NOT NULL OR (unfailed AND NOT parent_failed))) AND (c.state = 'awaiting_parents') IS TRUE
      ORDER BY c.id
      FOR UPDATE OF c
    ), applied AS (
      UPDATE ${t.jobs} c SET
        pending_parents = CASE WHEN e.failure IS NULL THEN c.pending_parents - e.satisfied ELSE 0 END,
        parent_failed = c.parent_failed OR e.parent_failed,
        state = CASE WHEN ${CANCELS} THEN 'cancelled' WHEN c.pending_parents - e.satisfied <= 0 THEN 'scheduled' ELSE c.state END,
        run_at = CASE WHEN NOT ${CANCELS} AND c.pending_parents - e.satisfied <= 0 THEN greatest(c.run_at, date_trunc('milliseconds', greatest(statement_timestamp(), c.created_at))) ELSE c.run_at END,
        last_error = CASE WHEN e.failure IS NOT NULL THEN e.failure WHEN ${ALL_SUCCEEDED} THEN ${quoteLiteral(ALL_PARENTS_SUCCEEDED)} ELSE c.last_error END,
        -- Dated at the statement's time, as its parent's end (a release too: due from then); never
        -- before the dependant's own creation, which may have committed after this transaction
        -- began (the write waited for its enqueue's lock).
        finished_at = CASE WHEN ${CANCELS} THEN greatest(statement_timestamp(), c.created_at) ELSE c.finished_at END,
        updated_at = greatest(statement_timestamp(), c.created_at)
      FROM effect e
      -- The count, a one-time filter, makes the locks above come first without changing this join's plan.
      WHERE (SELECT count(*) FROM held) >= 0 AND c.id = e.child_id AND (c.state = 'awaiting_parents') IS TRUE AND (NOT ${CANCELS} OR c.id IN (SELECT id FROM held))
      RETURNING c.id, c.state
    )
    -- The next level: the dependants this one cancelled, and those that ended in line (cancelled
    -- before their turn) whose sequence edge it settled, which pass their turn on.
    SELECT (SELECT count(*) FROM marked), (SELECT array_agg(f.id) FROM (
        SELECT a.id FROM applied a WHERE a.state = 'cancelled'
        UNION SELECT c.id FROM ${t.jobs} c
        WHERE c.id = ANY(ARRAY(SELECT child_id FROM marked WHERE sequence IS NOT NULL)) AND (c.state IN ${TERMINAL}) IS TRUE
      ) f)
    INTO batch, frontier;`;
}

/**
 * The triggers that apply the effects of a state change inside the very statement (and so the very
 * transaction) that made it: the fenced outcome write, a claim, a sweep, an operator action.
 *
 * - history: one entry per change of state or attempt, as the policy allows;
 * - slots: a job that stops running gives its concurrency slots back (release_slots, in
 *   postgres-limits.ts);
 * - dependencies: a job that becomes terminal settles its open edges, lowering latches, releasing
 *   dependants (with a wake-up hint) or cancelling `on_success` ones, and `on_failure` ones whose
 *   every parent succeeded, whose own edges the settle function settles next, level by level, up
 *   to {@link INLINE_SETTLE_LIMIT} edges in all;
 * - counts: what the statement changed in the stored jobs per (queue, state), appended for a
 *   later fold (see countingSql), by triggers of their own that also fire on delete and truncate.
 *
 * A write that makes a job terminal locks its row `FOR UPDATE` before it writes (see
 * parent-guard.sql.ts for why, and why before): the outcome write, the sweep and a final
 * relinquish in their own statements, an operator's cancel before its write, and a cascade here,
 * in the settle function, before it cancels dependants.
 *
 * Statement-level triggers with transition tables cost one set-based pass per statement, not one
 * per row. They are installed on every migrate, because their body depends on the history policy.
 */
export function effectsSql(t: PostgresNaming, policy: HistoryPolicy): string {
  const fn = (name: string) => `${t.local(name).replace(/^"/, `"${t.schema}"."`)}`;
  const settle = fn('settle_dependencies');
  const insertError = policy === 'transitions_and_errors' ? 'n.last_error' : 'NULL';
  // core's historyError, from the old and new row: the error that ended an attempt (even when it
  // repeats the last one), or one the change newly set.
  const updateError =
    policy === 'transitions_and_errors'
      ? `CASE WHEN p.error IS DISTINCT FROM p.old_error OR (p.old_state = 'running' AND p.state <> 'succeeded') THEN p.error END`
      : 'NULL';
  // An entry into or out of running names the worker the lease went to or came from, and one out
  // of running keeps the deadline of the lease it ended: verify judges the change against it with
  // the same clock the fence used (the statement's).
  // Each entry is stamped with its statement's time, not its transaction's: a limited claim's
  // transaction begins before it waits for the limits lock, and its starts are stamped when its
  // claim statement runs (claim-limited.query.ts), so the log shows the instant the rate counted.
  const logInserts =
    policy === 'off'
      ? ''
      : `INSERT INTO ${t.history} (job_id, name, at, state, attempt, error)
           SELECT n.id, n.name, statement_timestamp(), n.state, n.attempt, ${insertError} FROM new_rows n ORDER BY n.id;`;
  const logUpdates = (lean: boolean) =>
    policy === 'off'
      ? ''
      : `, logged AS (
    INSERT INTO ${t.history} (job_id, name, at, state, attempt, error, worker_id, lease_until)
    SELECT p.id, p.name, statement_timestamp(), p.state, p.attempt, ${updateError},
      CASE WHEN p.state = 'running' THEN p.worker_id WHEN p.old_state = 'running' THEN p.old_worker_id END,
      CASE WHEN p.old_state = 'running' THEN p.old_leased_until END
    FROM pairs p
    WHERE (p.state IS DISTINCT FROM p.old_state OR p.attempt IS DISTINCT FROM p.old_attempt)${lean ? ' AND p.id NOT IN (SELECT id FROM lean)' : ''}
    ORDER BY p.id
  )`;
  // The pairing and what the other effects need, in one statement; under the lean finish it also
  // picks the successes to delete, and logs none of them.
  const pairing = (lean: boolean) => `WITH pairs AS MATERIALIZED (
    SELECT n.id, n.name, n.queue, n.state, o.state AS old_state, n.attempt, o.attempt AS old_attempt,
      n.last_error AS error, o.last_error AS old_error, n.worker_id, o.worker_id AS old_worker_id, o.leased_until AS old_leased_until${lean ? ', n.output, n.unique_key, n.window_kind, n.sequence_key' : ''}
    FROM new_rows n JOIN old_rows o ON o.id = n.id
  )${lean ? `, lean AS MATERIALIZED (
    ${leanCandidates(t)}
  )` : ''}${logUpdates(lean)}
  SELECT array_agg(p.id) FILTER (WHERE (p.state IN ${TERMINAL} AND p.old_state NOT IN ${TERMINAL}) OR (p.state = 'cancelled' AND p.old_state IN ${DEAD_LETTER})),
    array_agg(p.id) FILTER (WHERE p.old_state = 'running' AND p.state <> 'running'),
    array_agg(DISTINCT p.queue) FILTER (WHERE p.old_state = 'awaiting_parents' AND p.state = 'scheduled')${lean ? ',\n    (SELECT array_agg(id) FROM lean)' : ''}
  INTO finished, stopped, woken${lean ? ', leaned' : ''}
  FROM pairs p;`;
  return `
-- Level by level, never recursively: the UPDATE of each level fires jobs_after_update, which
-- leaves the settling to this loop while SETTLING is on (the function's SET clause turns it on for
-- its own run only, and puts it back however the run ends).
CREATE OR REPLACE FUNCTION ${settle}(parent_ids uuid[], max_edges integer) RETURNS integer LANGUAGE plpgsql
  SET enable_nestloop = on SET enable_mergejoin = on SET ${SETTLING} = 'on' AS $fn$
DECLARE
  settled_edges integer := 0;
  batch integer;
  frontier uuid[] := parent_ids;
BEGIN
  IF frontier IS NULL THEN
    ${settleLevel(t, 'true', false)}
    settled_edges := batch;
  END IF;
  WHILE frontier IS NOT NULL AND settled_edges < max_edges LOOP
    ${settleLevel(t, 'd.parent_id = ANY(frontier)', true)}
    settled_edges := settled_edges + batch;
  END LOOP;
  RETURN settled_edges;
END
$fn$;

CREATE OR REPLACE FUNCTION ${fn('jobs_after_insert')}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  ${logInserts}
  RETURN NULL;
END
$fn$;

-- One statement pairs each row's old and new version, writes the history and gathers what the
-- other effects need; each of those then runs only if some pair calls for it. A claim (the
-- statement an idle worker waits on) needs none of them, and a release of slots or a wake-up hint
-- is rare outside outcome writes and dependency settling.
-- The pairing is a hash join, and the function's own planner settings make it one: PL/pgSQL plans
-- this statement once per session, with the transition tables' sizes of that first call. A first
-- call with one row planned a nested loop that every later call reused, and a nested loop of 1,000
-- released dependants against themselves is a million comparisons. No other step of this function
-- joins (the slots are found through their job_id index), and the settle function, which it calls,
-- sets the defaults back for its own plans.
CREATE OR REPLACE FUNCTION ${fn('jobs_after_update')}() RETURNS trigger LANGUAGE plpgsql
  SET enable_nestloop = off SET enable_mergejoin = off AS $fn$
DECLARE
  finished uuid[];
  stopped uuid[];
  woken text[];
  leaned uuid[];
BEGIN
  -- Only an outcome write under the lean finish sets the setting (complete-jobs.query.ts); every
  -- other statement, claims included, runs the statement it always ran.
  IF current_setting('${LEAN_FINISH}', true) IS DISTINCT FROM ${quoteLiteral(t.jobs)} THEN
  ${pairing(false)}
  ELSE
  ${pairing(true)}
  END IF;
  -- Settling first: it may wait for an enqueue that holds a dependant it cancels, and that wait
  -- must not hold the limits lock release_slots takes.
  IF finished IS NOT NULL AND current_setting('${SETTLING}', true) IS DISTINCT FROM 'on'
      AND EXISTS (SELECT 1 FROM ${t.dependencies} d WHERE d.parent_id = ANY(finished) AND NOT d.settled) THEN
    PERFORM ${settle}(finished, ${INLINE_SETTLE_LIMIT} + ${SETTLE_EDGES_PER_ENDED_JOB} * cardinality(finished));
  END IF;
  IF stopped IS NOT NULL THEN
    PERFORM ${limitFunction(t, 'release_slots')}(stopped);
  END IF;
  IF woken IS NOT NULL THEN
    PERFORM pg_notify('${t.channel}', q) FROM unnest(woken) AS q;
  END IF;
  -- Jobs finished: one payload-less hint per statement (the same NOTIFY twice in a transaction is
  -- sent once), so a process waiting on jobs (waitFor) reads them now instead of at its next poll.
  IF finished IS NOT NULL THEN
    PERFORM pg_notify('${t.channel}', '${FINISH_HINT}');
  END IF;
  -- Last, once their slots are back: the lean successes go, with the entries they had and their
  -- own (settled) edges to their parents, as retention would delete them. The delete's counting
  -- trigger takes them out of the counts.
  IF leaned IS NOT NULL THEN
    WITH history AS (
      DELETE FROM ${t.history} WHERE job_id = ANY(leaned)
    ), edges AS (
      DELETE FROM ${t.dependencies} WHERE child_id = ANY(leaned)
    )
    DELETE FROM ${t.jobs} WHERE id = ANY(leaned);
  END IF;
  RETURN NULL;
END
$fn$;

${countingSql(t)}
DROP TRIGGER IF EXISTS ${t.local('jobs_effects_insert')} ON ${t.jobs};
CREATE TRIGGER ${t.local('jobs_effects_insert')} AFTER INSERT ON ${t.jobs}
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn('jobs_after_insert')}();
DROP TRIGGER IF EXISTS ${t.local('jobs_effects_update')} ON ${t.jobs};
CREATE TRIGGER ${t.local('jobs_effects_update')} AFTER UPDATE ON ${t.jobs}
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn('jobs_after_update')}();
`;
}

/**
 * The counting triggers: what each statement changed in the stored jobs per (queue, state),
 * appended to the deltas table as one row per (queue, state) it changed, which a fold later moves
 * into the counts (migration 0012 says why). An update adds its new rows and takes away its old
 * ones, so one that changes no state or queue (a heartbeat) appends nothing, and no join is
 * needed. A delete takes its rows away; a TRUNCATE empties both tables, which it can do because it
 * holds the jobs table exclusively. They are triggers of their own, beside the effects triggers,
 * so their body is the same under every history policy.
 */
function countingSql(t: PostgresNaming): string {
  const fn = t.local('jobs_count_changes').replace(/^"/, `"${t.schema}"."`);
  const deltas = `INSERT INTO ${t.countDeltas} (queue, state, delta)`;
  const triggers = (
    [
      ['insert', 'AFTER INSERT', 'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT'],
      ['update', 'AFTER UPDATE', 'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT'],
      ['delete', 'AFTER DELETE', 'REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT'],
      ['truncate', 'AFTER TRUNCATE', 'FOR EACH STATEMENT'],
    ] as const
  )
    .map(([name, event, rows]) => {
      const trigger = t.local(`jobs_count_${name}`);
      return `DROP TRIGGER IF EXISTS ${trigger} ON ${t.jobs};
CREATE TRIGGER ${trigger} ${event} ON ${t.jobs} ${rows} EXECUTE FUNCTION ${fn}();`;
    })
    .join('\n');
  return `
CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
    ${deltas} SELECT queue, state, count(*) FROM new_rows GROUP BY queue, state;
  ELSIF TG_OP = 'UPDATE' THEN
    ${deltas}
    SELECT queue, state, sum(delta) FROM (
      SELECT queue, state, 1 AS delta FROM new_rows UNION ALL SELECT queue, state, -1 FROM old_rows
    ) changed GROUP BY queue, state HAVING sum(delta) <> 0;
  ELSIF TG_OP = 'DELETE' THEN
    ${deltas} SELECT queue, state, -count(*) FROM old_rows GROUP BY queue, state;
  ELSE
    TRUNCATE ${t.counts}, ${t.countDeltas};
  END IF;
  RETURN NULL;
END
$fn$;
${triggers}
`;
}

/** The qualified name of the settle function, for jobSettleDependencies. */
export function settleFunction(t: PostgresNaming): string {
  return t.local('settle_dependencies').replace(/^"/, `"${t.schema}"."`);
}
