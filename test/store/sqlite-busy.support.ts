import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';

/**
 * The host's own busy timeout on the test DataSources: long, so that an operation that waited for
 * another process by blocking the thread in SQLite's busy handler would stall the event loop for
 * seconds, which {@link stallMonitor} sees, instead of passing quietly.
 */
export const HOST_BUSY_TIMEOUT_MS = 10_000;

/** The statements that try for the file's lock: a write transaction's BEGIN, and the switch to WAL. */
const LOCK_TRY = /^(BEGIN IMMEDIATE|PRAGMA journal_mode = WAL)/;

/** Counts the connection's tries for the file's lock (better-sqlite3 reports tries that fail too). */
export class BeginCounter {
  private count = 0;
  private readonly waiters: { n: number; resolve: () => void }[] = [];

  hook(text: string): void {
    if (!LOCK_TRY.test(text)) return;
    this.count += 1;
    for (const waiter of this.waiters.filter((w) => w.n <= this.count)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  /** Resolves once `more` further tries ran after this call. */
  after(more: number): Promise<void> {
    const n = this.count + more;
    return new Promise((resolve) => (n <= this.count ? resolve() : this.waiters.push({ n, resolve })));
  }
}

export interface SqliteFile {
  readonly database: string;
  readonly dataSource: DataSource;
  readonly store: SqliteJobStore;
  readonly begins: BeginCounter;
}

const dirs: string[] = [];
const sources: DataSource[] = [];

/** A fresh SQLite file, a DataSource on it that counts its BEGINs, and a store (not yet migrated). */
export async function sqliteFile(busyTimeoutMs?: number, database?: string): Promise<SqliteFile> {
  if (database === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-busy-'));
    dirs.push(dir);
    database = join(dir, 'shared.db');
  }
  const begins = new BeginCounter();
  const dataSource = await new DataSource({
    type: 'better-sqlite3',
    database,
    timeout: HOST_BUSY_TIMEOUT_MS,
    verbose: (text: unknown) => begins.hook(String(text)),
  }).initialize();
  sources.push(dataSource);
  const store = new SqliteJobStore(busyTimeoutMs === undefined ? { dataSource } : { dataSource, busyTimeoutMs });
  return { database, dataSource, store, begins };
}

export async function cleanupFiles(): Promise<void> {
  for (const source of sources.splice(0)) if (source.isInitialized) await source.destroy();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * Records the longest gap between ticks of a 5 ms interval: how long the event loop was stalled.
 * A wait done by blocking in SQLite's busy handler shows up as a gap of seconds.
 */
export function stallMonitor(): { stop: () => number } {
  let last = Date.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = Date.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  // A test that fails before stop() must not keep jest alive.
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(longest, Date.now() - last);
    },
  };
}

/** Which settles first: `signal` (returns 'signal'), or `work` (returns 'settled' or its error). */
export async function first(signal: Promise<void>, work: Promise<unknown>): Promise<unknown> {
  return Promise.race([signal.then(() => 'signal' as const), work.then(() => 'settled' as const, (error: unknown) => error)]);
}
