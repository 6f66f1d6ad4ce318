// Loads the append-only execution logs of every process into the chaos tables, so the checks can
// join them with what the database committed.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Parses every <dir>/*.jsonl: executions (a start and, unless the process died, an end), settled reports, producer events. */
export function readLogs(dir) {
  const executions = [];
  const open = new Map();
  const settled = [];
  const producers = { committed: 0, rolledBack: 0, failed: 0 };
  let unreadable = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      if (!line) continue;
      let e;
      try {
        e = JSON.parse(line);
      } catch {
        unreadable += 1; // a line cut short by kill -9
        continue;
      }
      const key = `${e.w}|${e.job}|${e.attempt}`;
      if (e.ev === 'start') {
        const execution = { worker_id: e.w, job_id: e.job, attempt: e.attempt, name: e.name, key: e.key ?? null, started_at: e.t, ended_at: null, threw: null };
        executions.push(execution);
        open.set(key, execution);
      } else if (e.ev === 'end' && open.has(key)) {
        Object.assign(open.get(key), { ended_at: e.t, threw: e.threw });
        open.delete(key);
      } else if (e.ev === 'settled') {
        settled.push({ worker_id: e.w, job_id: e.job, attempt: e.attempt, kind: e.kind, status: e.status, state: e.state, at: e.t });
      } else if (e.ev === 'committed') producers.committed += 1;
      else if (e.ev === 'rolled_back') producers.rolledBack += 1;
      else if (e.ev === 'enqueue_failed') producers.failed += 1;
    }
  }
  return { executions, settled, producers, unreadable };
}

/**
 * Loads the logs through the database's `insertRows(table, columns, rows)`: each column as
 * [name, type], where type is PostgreSQL's ('timestamptz' columns hold epoch milliseconds).
 */
export async function loadLogs(db, dir, pauses) {
  const logs = readLogs(dir);
  await db.insertRows('executions', [['worker_id', 'text'], ['job_id', 'uuid'], ['attempt', 'integer'], ['name', 'text'], ['key', 'text'], ['started_at', 'timestamptz'], ['ended_at', 'timestamptz'], ['threw', 'boolean']], logs.executions);
  await db.insertRows('settled', [['worker_id', 'text'], ['job_id', 'uuid'], ['attempt', 'integer'], ['kind', 'text'], ['status', 'text'], ['state', 'text'], ['at', 'timestamptz']], logs.settled);
  await db.insertRows('pauses', [['worker_id', 'text'], ['stopped_at', 'timestamptz'], ['resumed_at', 'timestamptz']], pauses);
  return logs;
}

/** After a failed run: the tables the checks read, as JSON files in <dir>, since a private server's data goes with it. */
export async function dumpTables(db, dir) {
  mkdirSync(dir, { recursive: true });
  const tables = [
    ...['enqueued', 'effects', 'executions', 'settled', 'pauses', 'lease_audit'].map((t) => ['chaos', t]),
    ...['jobs', 'job_history', 'dependencies', 'concurrency_limits'].map((t) => ['scheduler', t]),
  ];
  for (const [owner, table] of tables) {
    const { name, rows } = await db.tableRows(owner, table);
    writeFileSync(`${dir}/${name}.json`, JSON.stringify(rows));
  }
}
