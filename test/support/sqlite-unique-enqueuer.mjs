// A separate process that enqueues jobs under a few unique keys into a shared SQLite file and
// prints, per key, the ids the store answered with. Used by the multi-process unique-key test; it
// imports the built package, as a real second process would. It prints "ready" once open and
// starts when the parent writes a line to its stdin, so all processes start together.
import { createInterface } from 'node:readline';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../dist/lib/index.js';

const [database, label, keys, rounds] = process.argv.slice(2);
const dataSource = await new DataSource({ type: 'better-sqlite3', database }).initialize();
const store = new SqliteJobStore({ dataSource });
const lines = createInterface({ input: process.stdin });
const go = new Promise((resolve) => lines.once('line', resolve));
process.stderr.write('ready\n');
await go;
lines.close();
const answered = {};
for (let round = 0; round < Number(rounds); round++) {
  for (let k = 0; k < Number(keys); k++) {
    const mode = (round + k) % 2 === 0 ? 'keep' : 'replace';
    const { id } = await store.jobEnqueue({ job: { name: 'mp.unique', payload: { label, round }, uniqueKey: `key-${k}`, uniqueKeyMode: mode, delayMs: 60_000 } });
    (answered[`key-${k}`] ??= []).push(id);
  }
}
await dataSource.destroy();
process.stdout.write(JSON.stringify(answered));
