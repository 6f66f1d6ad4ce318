import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { SchedulerOrchestrator, type SettledEvent } from '../../lib/index.js';

/** A fresh SQLite file path, removed by `cleanup()`. */
export function tempSqlite(): { database: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-nest-'));
  return { database: join(dir, 'app.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Resolves when the app's worker settles an attempt of `jobId` (optionally a matching one). */
export function settled(app: INestApplicationContext, jobId: string, filter?: (event: SettledEvent) => boolean): Promise<SettledEvent> {
  return app.get(SchedulerOrchestrator).node.settledOnce(jobId, filter);
}

/** A promise with its resolver, for handlers that report to the test. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
