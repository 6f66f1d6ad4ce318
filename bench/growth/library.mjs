// The library under test, loaded from another checkout's dist/ (`--lib DIR`), so one bench file
// measures the build before a change and the build after it. TypeORM is resolved from that
// checkout too, so the DataSource the bench builds is the class the library expects.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

function gitCommit(root) {
  try {
    const commit = execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', root, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${commit}+dirty` : commit;
  } catch {
    return null;
  }
}

/** Loads `dir`/dist; throws one sentence when it is not built. */
export async function loadLibrary(dir) {
  const root = resolve(dir);
  const entry = join(root, 'dist/lib/index.js');
  if (!existsSync(entry)) throw new Error(`--lib ${root} has no dist/lib/index.js: run npm run build there first.`);
  const lib = await import(pathToFileURL(entry).href);
  const worker = await import(pathToFileURL(join(root, 'dist/lib/worker/public-api.js')).href);
  const require = createRequire(join(root, 'package.json'));
  const { DataSource } = await import(pathToFileURL(require.resolve('typeorm')).href);
  const library = {
    root,
    commit: gitCommit(root),
    PostgresJobStore: lib.PostgresJobStore,
    WorkerNode: worker.WorkerNode,
    FunctionInvoker: worker.FunctionInvoker,
    /**
     * A DataSource on `url` and a store over it. `pgOptions` is the libpq `options` string of every
     * connection (the plans section turns auto_explain on with it).
     */
    async open(url, { max = 10, store = {}, pgOptions } = {}) {
      const extra = { max, ...(pgOptions ? { options: pgOptions } : {}) };
      const dataSource = await new DataSource({ type: 'postgres', url, extra }).initialize();
      const opened = new lib.PostgresJobStore({ dataSource, ...store });
      // The store's heartbeat connection and wake-up listener are pool clients it holds: closed
      // first, or destroying the DataSource waits for them forever.
      const close = async () => {
        await opened.close();
        await dataSource.destroy();
      };
      return { dataSource, store: opened, close };
    },
  };
  return library;
}

/** A `system` for `Server.database()` (bench/peers/cell.mjs): a fresh database migrated by this library. */
export function systemOf(library) {
  return {
    name: 'ours',
    remainingSql: `SELECT count(*)::int AS n FROM durable_scheduler.jobs WHERE state = 'scheduled' AND run_at <= now()`,
    async install(url) {
      const { store, close } = await library.open(url, { max: 2 });
      await store.migrate();
      await close();
    },
  };
}
