import { StoreUnavailableError } from '../../core/index.js';
import type { PgPool, PgPooledClient } from './pg-executor.js';

/** How long each step of the check may take before the check gives up and lets the boot go on. */
const STEP_WAIT_MS = 2_000;

const TRANSACTION_POOLER_MESSAGE =
  "The DataSource's connections go through a pooler in transaction mode (one connection's statements ran in two server sessions); give the store poolMode: 'transaction' (docs/operations.md#pgbouncer).";

const TIMED_OUT = Symbol('timed out');

/**
 * Refuses a pool whose connections go through a pooler in transaction mode when the store was not
 * told so (`poolMode`). Without it the store prepares statements and LISTENs on a session it does
 * not keep: prepared statements fail later, at load, and wake-ups are lost in silence. A session
 * keeps its server process between two statements. So connection A reads its server's pid, a
 * second connection holds a transaction open, and A reads its pid again: through a transaction
 * pooler A's next statement must then run on another server connection (PgBouncer also hands the
 * second connection the server connection A used last).
 *
 * Best effort, and it never fails a boot that would have gone on without it: with a pool of one,
 * when a second connection cannot be had, when a statement fails, or when a step takes longer than
 * {@link STEP_WAIT_MS} (a pooler with no server connection to spare), it checks nothing. A pooler
 * that hands out server connections in turn may pass it. A connection left in a transaction or with
 * a statement in flight is destroyed, never handed back to the pool.
 */
export async function refuseTransactionPooler(pool: PgPool, poolSize: number, waitMs = STEP_WAIT_MS): Promise<void> {
  if (poolSize < 2) return;
  // Any failure of the check itself checks nothing: migrate's own statements say what is wrong.
  if ((await movedBetweenSessions(pool, waitMs).catch(() => false)) === true) throw new StoreUnavailableError(TRANSACTION_POOLER_MESSAGE);
}

/** Whether connection A's second statement ran in another server session than its first; null when the check could not tell. */
async function movedBetweenSessions(pool: PgPool, waitMs: number): Promise<boolean | null> {
  const a = await checkOut(pool);
  if (a === null) return null;
  try {
    a.clean = false;
    const first = await within(backendPid(a.client), waitMs);
    if (first === TIMED_OUT) return null;
    a.clean = true;
    const b = await within(checkOut(pool), waitMs, (late) => late.release());
    if (b === TIMED_OUT || b === null) return null;
    try {
      b.clean = false;
      if ((await within(holdTransaction(b.client), waitMs)) === TIMED_OUT) return null;
      a.clean = false;
      const second = await within(backendPid(a.client), waitMs);
      if (second === TIMED_OUT) return null;
      a.clean = true;
      await b.client.query({ text: 'ROLLBACK' });
      b.clean = true;
      return first !== second;
    } finally {
      b.release();
    }
  } finally {
    a.release();
  }
}

interface CheckedOut {
  readonly client: PgPooledClient;
  /** Whether the connection holds no transaction and no statement in flight: only then does it go back to the pool, else it is destroyed. */
  clean: boolean;
  release(): void;
}

/**
 * A connection for the check, with its own 'error' listener while it is out (see withPooledClient);
 * null when none can be had, and the check then checks nothing.
 */
async function checkOut(pool: PgPool): Promise<CheckedOut | null> {
  let client: PgPooledClient;
  try {
    client = await pool.connect();
  } catch {
    return null;
  }
  let lost: Error | undefined;
  let back = false;
  const onError = (error: Error) => void (lost ??= error);
  client.on('error', onError);
  const out: CheckedOut = {
    client,
    clean: true,
    release: () => {
      if (back) return;
      back = true;
      client.removeListener('error', onError);
      client.release(lost ?? (out.clean ? undefined : new Error('The pooler check left this connection in a transaction or a statement.')));
    },
  };
  return out;
}

async function holdTransaction(client: PgPooledClient): Promise<void> {
  await client.query({ text: 'BEGIN' });
  await client.query({ text: 'SELECT 1' });
}

async function backendPid(client: PgPooledClient): Promise<number> {
  const { rows } = await client.query({ text: 'SELECT pg_backend_pid() AS pid' });
  return Number((rows[0] as { pid: number }).pid);
}

/**
 * `work`'s result, or TIMED_OUT if it takes longer than `ms`. Work still running then is left to
 * end on its own (its connection is destroyed by the caller), and `late` is given what it yields.
 */
function within<T>(work: Promise<T>, ms: number, late?: (value: NonNullable<T>) => void): Promise<T | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => ((timedOut = true), resolve(TIMED_OUT)), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        if (!timedOut) resolve(value);
        else if (value !== null && value !== undefined) late?.(value as NonNullable<T>);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!timedOut) reject(error);
      },
    );
  });
}
