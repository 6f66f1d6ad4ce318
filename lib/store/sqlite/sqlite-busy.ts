import type { Database, Statement } from 'better-sqlite3';
import { StoreBusyError } from '../../core/index.js';

/**
 * True for SQLITE_BUSY and its extended codes (SQLITE_BUSY_SNAPSHOT, SQLITE_BUSY_RECOVERY,
 * SQLITE_BUSY_TIMEOUT), whether better-sqlite3 threw it or TypeORM wrapped it in a QueryFailedError.
 */
export function isSqliteBusy(error: unknown): boolean {
  const direct = (error as { code?: unknown } | null)?.code;
  const wrapped = (error as { driverError?: { code?: unknown } } | null)?.driverError?.code;
  return [direct, wrapped].some((code) => typeof code === 'string' && code.startsWith('SQLITE_BUSY'));
}

/** The one sentence a caller sees when another process kept the file's write lock too long. */
export function lockedTooLong(timeoutMs: number, cause: unknown): StoreBusyError {
  return new StoreBusyError(
    `The SQLite database stayed locked by another process for ${timeoutMs} ms, so the transaction could not begin and nothing was written.`,
    { cause },
  );
}

/** Back-off between tries: short, because SQLite grants the lock to whoever asks first once it is free. */
const FIRST_DELAY_MS = 1;
const MAX_DELAY_MS = 20;

export interface WaitOutBusyOptions {
  /** How long to keep trying before failing with `onTimeout`'s error. */
  readonly timeoutMs: number;
  /** The error to raise once the time is up, given the last busy error. */
  readonly onTimeout?: (cause: unknown) => Error;
  /** Called before each retry; throws to stop waiting (the caller gave up). */
  readonly stillWanted?: () => void;
}

/**
 * Runs `work`, which must take SQLite's write lock before anything else (BEGIN IMMEDIATE), and
 * retries it while another process holds the lock, sleeping between tries so the event loop keeps
 * running: heartbeats, timers and other requests go on while this waits. Each try runs with the
 * connection's busy handler off, because that handler waits by blocking the thread (for TypeORM's
 * `timeout`, 5 s by default); the host's setting is put back after every try.
 */
export async function waitOutBusy<T>(db: Database, work: () => T, options: WaitOutBusyOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (let delay = FIRST_DELAY_MS; ; delay = Math.min(delay * 2, MAX_DELAY_MS)) {
    try {
      return withoutBusyHandler(db, work);
    } catch (error) {
      if (!isSqliteBusy(error)) throw error;
      if (Date.now() >= deadline) throw (options.onTimeout ?? ((cause) => lockedTooLong(options.timeoutMs, cause)))(error);
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    options.stillWanted?.();
  }
}

interface BusyPragmas {
  readonly read: Statement;
  readonly off: Statement;
  readonly restore: Map<number, Statement>;
}
const pragmas = new WeakMap<Database, BusyPragmas>();

/** Runs `work` synchronously with the busy handler off, then restores the connection's own timeout. */
function withoutBusyHandler<T>(db: Database, work: () => T): T {
  let statements = pragmas.get(db);
  if (!statements) {
    statements = { read: db.prepare('PRAGMA busy_timeout').pluck(), off: db.prepare('PRAGMA busy_timeout = 0'), restore: new Map() };
    pragmas.set(db, statements);
  }
  const saved = Number(statements.read.get());
  if (saved === 0) return work();
  statements.off.get();
  try {
    return work();
  } finally {
    let restore = statements.restore.get(saved);
    if (!restore) statements.restore.set(saved, (restore = db.prepare(`PRAGMA busy_timeout = ${saved}`)));
    restore.get();
  }
}
