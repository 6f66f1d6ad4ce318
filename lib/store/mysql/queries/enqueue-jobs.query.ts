import { takesDebounce, type JobState } from '../../../core/index.js';
import { assertAcyclic, parentsToLookUp, planDependencies } from '../../dependencies/dependency-plan.js';
import { chainSequences, hasSequences, sequenceKeys } from '../../dependencies/sequence-chain.js';
import { lockSequences, parentsOf, parentsStatement, type ParentRow, type ParentState } from './enqueue-reads.query.js';
import type { NewJob } from '../../enqueue-input.js';
import type { JobRow } from '../../job-row.js';
import { hasKeys, planUnique, slotOf, uniqueSlot, windowSlot, type UniqueHolder, type UniquePlan } from '../../unique/unique-plan.js';
import type { WindowKind } from '../../window/job-window.js';
import type { EffectWriter } from '../mysql-effects.js';
import { QUERY_BUDGET, sizeOf, type MysqlExecutor, type MysqlStatement } from '../mysql-executor.js';
import { lockNames, parentGuard } from '../mysql-locks.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import { instantParam } from '../mysql-row.js';
import { declareLimitsStatements } from './declare-limits.query.js';

/** What one batch wrote: ids inserted, queues with work due now, and what its unique keys did. */
export interface EnqueueWrite {
  readonly created: Set<string>;
  readonly due: Set<string>;
  readonly plan: UniquePlan | null;
  /** Stored holders whose payload and run time were rewritten. */
  readonly replaced: Set<string>;
}

const INSERT_COLUMNS =
  'id, name, queue, payload, state, run_at, scheduled_for, max_attempts, schedule_id, pending_parents, dependency_mode, concurrency_key, last_error, finished_at, created_at, updated_at, unique_key, retry, traceparent, tracestate, priority, window_kind, window_key, window_ends_at, sequence_key, sequence_mode, batch_id, batch_callback, parent_failed, group_key, parked_key';
const INSERT_ROW = `(${INSERT_COLUMNS.split(', ').map(() => '?').join(', ')})`;

/** MySQL's error number for a duplicate key. */
const ER_DUP_ENTRY = 1062;

/**
 * Plans and stages an enqueue in `db`'s open transaction (the store's own, or the host's): a job
 * whose id exists writes nothing; a job whose unique key is held writes nothing or rewrites the
 * holder (see planUnique); each new job gets its dependency edges and the limits it declares; a
 * job that joins a sequence runs after the sequence's tail, or the job before it in the batch, and
 * the batch moves each tail on (docs/sequences.md).
 *
 * What it reads, it locks, so nothing it decided on changes before it commits: the unique keys
 * (a named lock each, mysql-locks.ts, so the second of two enqueues of one key waits and then
 * finds the first's job), their holders, each sequence's row (so the second of two enqueues of one
 * key waits, and then runs after the first's job), and the parents' guards (shared, so a write that
 * ends a parent waits for this transaction and then settles the new edge; and an edge to a parent
 * that already ended is written settled). An id inserted meanwhile by another transaction fails the
 * INSERT (1062), and {@link writeEnqueue} plans again with `fresh` reads: locking reads, which see
 * what committed after a REPEATABLE READ transaction's snapshot. Only then: a locking read that
 * finds nothing takes a gap lock, which two enqueues in one gap would deadlock on.
 */
export async function planEnqueue(
  db: MysqlExecutor,
  t: MysqlNaming,
  given: readonly NewJob[],
  effects: EffectWriter,
  fresh = false,
  latest?: LatestReads,
): Promise<EnqueueWrite & { statements: MysqlStatement[] }> {
  const now = effects.now;
  const keyed = hasKeys(given);
  const sequenced = hasSequences(given);
  if (keyed || sequenced) assertAcyclic(given);
  if (keyed) await lockNames(db, t, 'unique', given.flatMap((j) => slotOf(j) ?? []));
  const tails = sequenced ? await lockSequences(db, t, sequenceKeys(given)) : null;
  const checkIds = given.filter((job) => !job.freshId).map((job) => job.id);
  const existing = new Set(checkIds.length === 0 ? [] : (await db.query<{ id: string }>(`SELECT id FROM ${t.jobs} WHERE id IN (?)${fresh ? ' LOCK IN SHARE MODE' : ''}`, [checkIds])).map((r) => r.id));
  // A tail that retention deleted is looked up with the other parents, not found, and leaves nothing to wait for.
  const chained = tails ? chainSequences(given, tails, existing) : null;
  const jobs = chained?.jobs ?? given;
  const notStored = jobs.filter((job) => !existing.has(job.id));
  const held = keyed ? await holders(db, t, notStored, fresh) : null;
  if (held) await windowHolders(db, t, notStored, now, held, latest?.windowHolders);
  const plan = held ? planUnique(notStored, held.holders) : null;
  const batch = plan ? plan.insert : jobs;
  const parentIds = parentsToLookUp(batch);
  const parents = new Map<string, ParentState>();
  if (parentIds.length > 0) {
    // The parents' guard shared, then their states: a write that ends a parent holds its guard
    // exclusive, so the states read here stay true until this transaction ends (mysql-locks.ts).
    const results = await db.script([...parentGuard(t, parentIds, 'shared'), parentsStatement(t, parentIds, sequenced)]);
    for (const [id, parent] of parentsOf(results.at(-1) as ParentRow[])) parents.set(id, parent);
    // In a host transaction at REPEATABLE READ the read above is as old as its first snapshot: a
    // parent that ended since would look unfinished, and its edge would wait for the settle sweep.
    // Read once more where each statement sees the latest commit, now that the guard is held. A
    // sequence's tail is read so too: another enqueue of its key may have committed it after the
    // snapshot, and this one waited for that enqueue on the key's row.
    const tailIds = new Set(tails?.values());
    const again = parentIds.filter((id) => parents.has(id) || tailIds.has(id));
    if (latest && again.length > 0) for (const [id, parent] of await latest.parents(again, sequenced)) parents.set(id, parent);
  }
  const stored = new Map([...parents].map(([id, parent]) => [id, parent.state]));
  const inLine = new Set([...parents].filter(([, parent]) => parent.inLine).map(([id]) => id));
  const plans = planDependencies(batch, stored, inLine).filter((planned) => !existing.has(planned.job.id));
  const created = new Set<string>();
  const due = new Set<string>();
  const rows: unknown[] = [];
  const edges: unknown[] = [];
  for (const { job, state, pendingParents, lastError, parentFailed, edges: jobEdges } of plans) {
    const runAt = job.runAt ?? now + job.delayMs;
    rows.push([
      job.id, job.name, job.queue, job.payload, state, instantParam(runAt), instantParam(runAt), job.maxAttempts, job.scheduleId ?? null,
      pendingParents, job.dependencyMode ?? null, job.concurrencyKey ?? null, lastError, state === 'cancelled' ? instantParam(now) : null,
      instantParam(now), instantParam(now), job.uniqueKey ?? null, job.retry ?? null, job.traceparent ?? null, job.tracestate ?? null, job.priority ?? 0,
      job.window?.kind ?? null, job.window?.key ?? null, job.window ? instantParam(now + job.window.endsInMs) : null,
      job.sequence?.key ?? null, job.sequence?.afterFailure ?? null, job.batchId ?? null, job.batchCallback ?? null, parentFailed,
      // A due grouped job waits in its group's lane, where the claim takes turns across groups (docs/groups.md).
      job.group ?? null, job.group != null && state === 'scheduled' && runAt <= now ? `group:${job.group}` : null,
    ]);
    for (const edge of jobEdges) edges.push([job.id, edge.parentId, edge.settled, edge.sequence ?? null]);
    effects.record(asInserted(job, state, lastError), lastError);
    effects.count(job.queue, state, 1);
    created.add(job.id);
    if (state === 'scheduled' && runAt <= now) due.add(job.queue);
  }
  const statements: MysqlStatement[] = [];
  // The jobs' INSERT in as many statements as the query budget needs (mysql-executor.ts): a batch
  // of large payloads would not fit one query, which the server refuses whole.
  for (const chunk of chunkBySize(rows as unknown[][])) {
    statements.push({ sql: `INSERT INTO ${t.jobs} (${INSERT_COLUMNS}) VALUES ${chunk.map(() => INSERT_ROW).join(', ')}`, values: chunk.flat() });
  }
  if (edges.length > 0) {
    statements.push({ sql: `INSERT INTO ${t.dependencies} (child_id, parent_id, settled, sequence) VALUES ${edges.map(() => '(?, ?, ?, ?)').join(', ')}`, values: edges.flat() });
  }
  // The rows are locked since lockSequences, and the tails are jobs this batch inserts.
  for (const [key, tail] of chained?.tails ?? []) statements.push({ sql: `UPDATE ${t.sequences} SET tail_id = ? WHERE \`key\` = ?`, values: [tail, key] });
  statements.push(...declareLimitsStatements(t, plans.map((p) => p.job)));
  const replaced = new Set<string>();
  for (const replace of plan?.replace ?? []) {
    // Locked with its key above, so the holder is as read: never claimed, or this would not be planned.
    // A debounced holder runs no later than its window's end.
    const wanted = replace.runAt ?? now + replace.delayMs;
    const end = held!.ends.get(replace.id);
    const runAt = end === undefined ? wanted : Math.min(wanted, end);
    statements.push({
      sql: `UPDATE ${t.jobs} SET payload = ?, run_at = ?, scheduled_for = ?, updated_at = ? WHERE id = ? AND attempt = 0 AND state IN ('scheduled', 'awaiting_parents')`,
      values: [replace.payload, instantParam(runAt), instantParam(runAt), instantParam(now), replace.id],
    });
    replaced.add(replace.id);
    if (runAt <= now) due.add(held!.queues.get(replace.id)!);
  }
  return { created, due, plan, replaced, statements };
}

/**
 * Reads outside the caller's transaction, as last committed, for an enqueue in a host's transaction
 * (whose REPEATABLE READ snapshot can be older than the named locks it waited for): the parents'
 * states, and the ids of the jobs that may hold the batch's windows.
 */
export interface LatestReads {
  readonly parents: (ids: readonly string[], sequenced: boolean) => Promise<Map<string, ParentState>>;
  readonly windowHolders: (jobs: readonly NewJob[], now: number) => Promise<WindowRow[]>;
}

/** Times an enqueue plans again after another transaction committed one of its ids first. */
const DUPLICATE_ID_RETRIES = 3;

/**
 * Plans and writes an enqueue in `db`'s open transaction, staging its effects on `effects` and
 * handing the statements to `send` (with a COMMIT, when the caller owns the transaction). They
 * run after a savepoint: if another transaction committed one of the ids first (1062), the
 * batch's rows written so far are rolled back to it, and the batch is planned again, now seeing
 * that job.
 */
export async function writeEnqueue(
  db: MysqlExecutor,
  t: MysqlNaming,
  jobs: readonly NewJob[],
  effects: EffectWriter,
  send: (statements: MysqlStatement[]) => Promise<unknown>,
  latest?: LatestReads,
): Promise<EnqueueWrite> {
  for (let attempt = 0; ; attempt += 1) {
    const planned = await planEnqueue(db, t, jobs, effects, attempt > 0, latest);
    try {
      await send([{ sql: 'SAVEPOINT durable_scheduler_enqueue' }, ...planned.statements, ...effects.take()]);
      return planned;
    } catch (error) {
      if (!isDuplicateId(error) || attempt >= DUPLICATE_ID_RETRIES) throw error;
      await db.run('ROLLBACK TO SAVEPOINT durable_scheduler_enqueue');
    }
  }
}

/** True for the error an INSERT gets when another transaction committed one of its ids first. */
export function isDuplicateId(error: unknown): boolean {
  const cause = (error as { errno?: number; cause?: { errno?: number } }) ?? {};
  return cause.errno === ER_DUP_ENTRY || cause.cause?.errno === ER_DUP_ENTRY;
}

/**
 * The stored holders of the batch's unique keys (and their queues), locked for the rest of the
 * transaction. Found by a plain read, then locked by id: a locking read that finds no holder
 * would take a gap lock on the unique index, even under this batch's named locks, and at
 * REPEATABLE READ (an application's transaction, by MySQL's default) two enqueues of different
 * keys in one gap each hold the gap and wait on the other's INSERT. The plain read may be older
 * than the named lock (REPEATABLE READ reads the transaction's first snapshot): a holder it
 * missed fails the INSERT (1062) and {@link writeEnqueue} plans again with `fresh`, a locking
 * read, which then finds the holder's row and locks only it.
 */
async function holders(db: MysqlExecutor, t: MysqlNaming, jobs: readonly NewJob[], fresh: boolean): Promise<Holders> {
  const keyed = jobs.filter((job) => job.uniqueKey != null);
  const found = new Map<string, UniqueHolder>();
  const queues = new Map<string, string>();
  if (keyed.length === 0) return { holders: found, queues, ends: new Map() };
  const columns = 'id, name, queue, unique_key, live_unique_key, state, attempt';
  const byKey = `(name, live_unique_key) IN (${keyed.map(() => '(?, ?)').join(', ')})`;
  const keys = keyed.flatMap((job) => [job.name, job.uniqueKey]);
  type Holder = { id: string; name: string; queue: string; unique_key: string; live_unique_key: string | null; state: JobState; attempt: number };
  let rows: Holder[];
  if (fresh) rows = await db.query<Holder>(`SELECT ${columns} FROM ${t.jobs} WHERE ${byKey} ORDER BY id FOR UPDATE`, keys);
  else {
    const seen = await db.query<{ id: string }>(`SELECT id FROM ${t.jobs} WHERE ${byKey}`, keys);
    // The rows as they are now, locked: a holder that ended meanwhile no longer holds its key.
    rows = seen.length === 0 ? [] : await db.query<Holder>(`SELECT ${columns} FROM ${t.jobs} WHERE id IN (?) ORDER BY id FOR UPDATE`, [seen.map((r) => r.id)]);
  }
  for (const r of rows) {
    if (r.live_unique_key === null) continue;
    found.set(uniqueSlot(r.name, r.unique_key), { id: r.id, state: r.state, attempt: r.attempt });
    queues.set(r.id, r.queue);
  }
  return { holders: found, queues, ends: new Map() };
}

/** The stored holders a batch found, their queues, and a debounced holder's window end (epoch ms). */
interface Holders {
  readonly holders: Map<string, UniqueHolder>;
  readonly queues: Map<string, string>;
  readonly ends: Map<string, number>;
}

/**
 * Adds to `held` the holders of the batch's windows: a throttle's job whose window is open at
 * `now`, and a debounce's job that has not started, locked (a claim skips it until this commits, so
 * its rewrite applies). The candidates come from a plain read, and in a host's transaction also
 * from `latest` (the plain read sees that transaction's own enqueues, `latest` what committed after
 * its snapshot). A throttle is decided from them as read: a window's end never changes, and the
 * key's named lock keeps a second opener out. A debounce candidate is locked by id and judged as
 * it is now. A locking read by a window index would take gap locks that two enqueues of different
 * keys deadlock on (see {@link holders}); the unique index on pending_debounce_key backs it up.
 */
async function windowHolders(db: MysqlExecutor, t: MysqlNaming, jobs: readonly NewJob[], now: number, held: Holders, latest?: LatestReads['windowHolders']): Promise<void> {
  const windowed = jobs.filter((job) => job.uniqueKey == null && job.window !== undefined);
  if (windowed.length === 0) return;
  const candidates = [...(await windowCandidates(db, t, windowed, now)), ...(latest ? await latest(windowed, now) : [])];
  for (const r of candidates) {
    if (r.window_kind !== 'throttle') continue;
    held.holders.set(windowSlot('throttle', r.name, r.window_key), { id: r.id, state: r.state, attempt: r.attempt });
  }
  const debounced = [...new Set(candidates.filter((r) => r.window_kind === 'debounce').map((r) => r.id))];
  if (debounced.length === 0) return;
  const rows = await db.query<WindowRow>(`SELECT ${WINDOW_COLUMNS} FROM ${t.jobs} WHERE id IN (?) ORDER BY id FOR UPDATE`, [debounced]);
  for (const r of rows) {
    if (!takesDebounce(r.window_kind, r.state, r.attempt)) continue;
    held.holders.set(windowSlot('debounce', r.name, r.window_key), { id: r.id, state: r.state, attempt: r.attempt });
    held.queues.set(r.id, r.queue);
    held.ends.set(r.id, fromMysqlInstant(r.window_ends_at).getTime());
  }
}

/** A job that may hold a window, as {@link windowCandidates} reads it. */
export interface WindowRow {
  readonly id: string;
  readonly name: string;
  readonly queue: string;
  readonly window_kind: WindowKind;
  readonly window_key: string;
  readonly window_ends_at: string;
  readonly state: JobState;
  readonly attempt: number;
}

const WINDOW_COLUMNS = 'id, name, queue, window_kind, window_key, window_ends_at, state, attempt';

/**
 * The jobs that may hold the windows of `windowed` at `now`, as `db` sees them (no lock): each
 * debounce key's job that has not started, through its unique index, and each throttle key's jobs
 * whose window is open, through the throttle index.
 */
export async function windowCandidates(db: MysqlExecutor, t: MysqlNaming, windowed: readonly NewJob[], now: number): Promise<WindowRow[]> {
  const pairs = (kind: WindowKind) => windowed.filter((job) => job.window!.kind === kind);
  const debounced = pairs('debounce');
  const throttled = pairs('throttle');
  const statements: MysqlStatement[] = [];
  if (debounced.length > 0) {
    statements.push({
      sql: `SELECT ${WINDOW_COLUMNS} FROM ${t.jobs} WHERE (name, pending_debounce_key) IN (${debounced.map(() => '(?, ?)').join(', ')})`,
      values: debounced.flatMap((job) => [job.name, job.window!.key]),
    });
  }
  if (throttled.length > 0) {
    statements.push({
      sql: `SELECT ${WINDOW_COLUMNS} FROM ${t.jobs}
            WHERE (window_key, name) IN (${throttled.map(() => '(?, ?)').join(', ')}) AND window_kind = 'throttle' AND window_ends_at > ?`,
      values: [...throttled.flatMap((job) => [job.window!.key, job.name]), instantParam(now)],
    });
  }
  return ((await db.script(statements)) as WindowRow[][]).flat();
}

/** The fields a history entry of an inserted job reads. */
function asInserted(job: NewJob, state: JobState, lastError: string | null): JobRow {
  return { id: job.id, name: job.name, state, attempt: 0, lastError } as JobRow;
}

/** Rows in runs whose values fit half a query's budget each, so a run and the statements beside it fit one query. */
function chunkBySize(rows: readonly unknown[][]): unknown[][][] {
  const chunks: unknown[][][] = [];
  let size = 0;
  for (const row of rows) {
    const cost = sizeOf({ sql: '', values: row });
    if (chunks.length === 0 || size + cost > QUERY_BUDGET / 2) {
      chunks.push([row]);
      size = cost;
    } else {
      chunks.at(-1)!.push(row);
      size += cost;
    }
  }
  return chunks;
}
