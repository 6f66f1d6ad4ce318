import type { PostgresNaming } from './postgres-naming.js';

/**
 * The limits lock: one advisory lock per installation that orders every change of a limit's slots
 * against everything that reads or moves them. Claims, slot renewals (heartbeats) and slot releases
 * (the effects trigger) take it shared, so they never wait on each other; setting, lowering,
 * raising or removing a limit, and provisioning one declared at enqueue, take it exclusive.
 *
 * Why: a limit set while jobs run gets one slot per running job, carrying that job's lease, and
 * nothing may slip in between the count and the slots. A claim whose snapshot predates the new
 * limit would start a job the count missed; a heartbeat that renewed a job's lease while the slots
 * were written would leave its slot on the old lease, to come free while the job still runs; a
 * release that ran first would leave a slot held by a finished job. Under the lock, each of those
 * either finished before the change (so the change sees its result) or waits for it to commit (and
 * then sees the new slots, since every statement that takes the lock reads them with a snapshot
 * taken after it). The exclusive side is held for milliseconds, by operator actions and the first
 * claim after a new key's limit is declared; the shared holders are short transactions.
 */
export function limitsLockId(t: PostgresNaming): string {
  return `hashtext('${`${t.lockKey}:limits`.replaceAll("'", "''")}')`;
}

/** A function of the installation's schema, quoted: `"schema"."prefixname"`. */
export function limitFunction(t: PostgresNaming, name: string): string {
  return t.local(name).replace(/^"/, `"${t.schema}"."`);
}

/**
 * The functions behind the limits lock, installed (replaced) on every migrate. Each takes the lock
 * shared and then reads with a snapshot of its own, taken after the lock (PL/pgSQL runs every
 * statement with a fresh snapshot under READ COMMITTED), which is what the statements that call
 * them cannot do: their snapshot was taken when they started, before they could wait for the lock.
 *
 * - limits_gate(): whether any concurrency or rate limit exists, or a job a limit held back is still
 *   parked, for the claim that has no slot bookkeeping (and reads no lanes);
 * - limits_exist(): whether any concurrency or rate limit exists, for the claim that reads lanes
 *   but counts no slots (claim-lanes-fair.query.ts): held-back jobs alone do not make it step aside;
 * - limits_pending(): whether a limit declared at enqueue still waits for its slots, for the claim
 *   that has (it runs first in that claim's transaction, so the claim reads after the lock);
 * - renew_held(ids, new_until): locks and renews the slots of the jobs a heartbeat is about to
 *   renew, before their leases, and names those it must not renew: each job under a cap in effect
 *   with no live slot of it (see below);
 * - renew_slots(ids, untils): gives the slots of the jobs a heartbeat renewed their new leases, as
 *   heartbeats of the previous install versions call it, for nodes that still run them;
 * - claim_pick(...): the claim's pick among its candidates, and which it held back (see below); it
 *   takes no lock.
 * - release_slots(stopped): frees the slots of jobs that stopped running. While a limit has surplus
 *   (more slot rows than its max), a stopped job's row is deleted instead, unless another
 *   transaction is deleting under that limit at this moment (SKIP LOCKED: nobody waits here). Both
 *   keep the free room equal to the max minus the jobs that run; deleting only brings the rows back
 *   to the max, so a claim reads fewer of them.
 */
export function limitFunctionsSql(t: PostgresNaming): string {
  const lock = `PERFORM pg_advisory_xact_lock_shared(${limitsLockId(t)});`;
  return `
CREATE OR REPLACE FUNCTION ${limitFunction(t, 'limits_gate')}() RETURNS boolean LANGUAGE plpgsql AS $fn$
BEGIN
  ${lock}
  RETURN EXISTS (SELECT 1 FROM ${t.limits}) OR EXISTS (SELECT 1 FROM ${t.rateLimits})
    OR EXISTS (SELECT 1 FROM ${t.jobs} WHERE state = 'scheduled' AND parked_key IS NOT NULL);
END
$fn$;

CREATE OR REPLACE FUNCTION ${limitFunction(t, 'limits_exist')}() RETURNS boolean LANGUAGE plpgsql AS $fn$
BEGIN
  ${lock}
  RETURN EXISTS (SELECT 1 FROM ${t.limits}) OR EXISTS (SELECT 1 FROM ${t.rateLimits});
END
$fn$;

CREATE OR REPLACE FUNCTION ${limitFunction(t, 'limits_pending')}() RETURNS boolean LANGUAGE plpgsql AS $fn$
BEGIN
  ${lock}
  RETURN EXISTS (SELECT 1 FROM ${t.limits} WHERE pending);
END
$fn$;

-- A job under a cap runs on its slot: the slot row, not the job's, is where a heartbeat and a claim
-- meet. A claim takes a slot whose held_until has passed by its own clock, with the row locked; a
-- heartbeat's clock is its transaction's start, which may be a little older. So the heartbeat
-- locks the slots first, waiting out a claim that holds one, and a job under a cap in effect that
-- no longer has a live slot of it (a claim took it, or it had lapsed) is lost: none of its slots
-- and not its lease are renewed, or it would run beside the job that now holds its slot, and keep
-- its other caps' slots held while its worker gives the attempt up. A cap still waiting to be
-- provisioned has no slots yet and asks for none.
CREATE OR REPLACE FUNCTION ${limitFunction(t, 'renew_held')}(ids uuid[], new_until timestamptz) RETURNS uuid[] LANGUAGE plpgsql AS $fn$
DECLARE
  lost uuid[];
BEGIN
  ${lock}
  -- Slots exist only under a cap, and no cap can appear while the lock is held.
  IF NOT EXISTS (SELECT 1 FROM ${t.limits}) THEN
    RETURN '{}';
  END IF;
  -- The live slots, locked (a slot a claim holds is waited for, then read as the claim left it),
  -- and read by job (the job_id index), not per cap: a cap's slots may be many.
  WITH live AS MATERIALIZED (
    SELECT s.key, s.job_id FROM ${t.slots} s WHERE s.job_id = ANY(ids) AND s.held_until > now() ORDER BY s.key, s.slot FOR UPDATE
  )
  SELECT coalesce(array_agg(j.id), '{}') INTO lost FROM ${t.jobs} j
  WHERE j.id = ANY(ids) AND EXISTS (
    SELECT 1 FROM ${t.limits} l
    WHERE NOT l.pending AND l.key IN ('queue:' || j.queue, 'key:' || j.concurrency_key)
      AND NOT EXISTS (SELECT 1 FROM live s WHERE s.key = l.key AND s.job_id = j.id));
  UPDATE ${t.slots} s SET held_until = new_until
  WHERE s.job_id = ANY(ids) AND s.held_until > now() AND NOT (s.job_id = ANY(lost));
  RETURN lost;
END
$fn$;

CREATE OR REPLACE FUNCTION ${limitFunction(t, 'renew_slots')}(ids uuid[], untils timestamptz[]) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  renewed integer;
BEGIN
  ${lock}
  UPDATE ${t.slots} s SET held_until = r.until FROM unnest(ids, untils) AS r(id, until)
  WHERE s.job_id = r.id AND s.held_until > now();
  GET DIAGNOSTICS renewed = ROW_COUNT;
  RETURN renewed;
END
$fn$;

-- The limited claim's pick: walks the candidates in claim order and takes each one that has room
-- left under every limit it falls under (its queue's and key's caps, q and k, and rate limits, rq
-- and rk), counting it against them, until the batch is full. Room is given per limit key, a rate
-- limit's with a '~' in front (a queue can have both). Greedy, as the one-writer stores pick: a
-- candidate held back by one limit takes nothing from the others, so the jobs behind it still fit.
-- A candidate passed over before the batch is full is held: held names it, and held_by the
-- first of its limits that had no room, whose lane it is parked in (claim-lanes.sql.ts).
CREATE OR REPLACE FUNCTION ${limitFunction(t, 'claim_pick')}(room_keys text[], room_n bigint[], q text[], k text[], rq text[], rk text[], batch integer,
  OUT picked integer[], OUT held integer[], OUT held_by text[]) LANGUAGE plpgsql AS $fn$
DECLARE
  room jsonb := '{}';
  wanted text[];
  key text;
  short text;
BEGIN
  picked := '{}';
  held := '{}';
  held_by := '{}';
  FOR i IN 1 .. coalesce(array_length(room_keys, 1), 0) LOOP
    room := room || jsonb_build_object(room_keys[i], room_n[i]);
  END LOOP;
  FOR i IN 1 .. coalesce(array_length(q, 1), 0) LOOP
    EXIT WHEN coalesce(array_length(picked, 1), 0) >= batch;
    wanted := array_remove(ARRAY[k[i], q[i], '~' || rk[i], '~' || rq[i]], NULL);
    short := NULL;
    FOREACH key IN ARRAY wanted LOOP
      IF short IS NULL AND coalesce((room ->> key)::bigint, 0) <= 0 THEN short := key; END IF;
    END LOOP;
    IF short IS NULL THEN
      FOREACH key IN ARRAY wanted LOOP
        room := jsonb_set(room, ARRAY[key], to_jsonb((room ->> key)::bigint - 1));
      END LOOP;
      picked := picked || i;
    ELSE
      held := held || i;
      held_by := held_by || ltrim(short, '~');
    END IF;
  END LOOP;
END
$fn$;

-- The pick as claims of the previous schema version call it, for nodes that still run that
-- version during a rolling deploy.
CREATE OR REPLACE FUNCTION ${limitFunction(t, 'limits_pick')}(room_keys text[], room_n bigint[], q text[], k text[], rq text[], rk text[], batch integer)
  RETURNS integer[] LANGUAGE sql AS $fn$
  SELECT (${limitFunction(t, 'claim_pick')}(room_keys, room_n, q, k, rq, rk, batch)).picked
$fn$;

CREATE OR REPLACE FUNCTION ${limitFunction(t, 'release_slots')}(stopped uuid[]) RETURNS void LANGUAGE plpgsql
  SET enable_nestloop = on SET enable_mergejoin = on AS $fn$
DECLARE
  capped record;
  gone integer;
BEGIN
  ${lock}
  IF EXISTS (SELECT 1 FROM ${t.limits} WHERE surplus > 0) THEN
    FOR capped IN
      SELECT l.key, l.surplus FROM ${t.limits} l
      WHERE l.surplus > 0 AND l.key IN (SELECT s.key FROM ${t.slots} s WHERE s.job_id = ANY(stopped))
      ORDER BY l.key
      FOR UPDATE OF l SKIP LOCKED
    LOOP
      -- The job_id test on the row itself, not only in the subquery: a claim may have taken a
      -- lapsed slot of a stopped job since the subquery's snapshot, and that row now counts.
      DELETE FROM ${t.slots} s WHERE s.key = capped.key AND s.job_id = ANY(stopped) AND s.slot IN (
        SELECT slot FROM ${t.slots} WHERE key = capped.key AND job_id = ANY(stopped) ORDER BY slot LIMIT capped.surplus);
      GET DIAGNOSTICS gone = ROW_COUNT;
      UPDATE ${t.limits} SET surplus = surplus - gone WHERE key = capped.key;
    END LOOP;
  END IF;
  UPDATE ${t.slots} s SET job_id = NULL, held_until = '-infinity' WHERE s.job_id = ANY(stopped);
END
$fn$;
`;
}
