// A separate process that writes instants through each store and prints what it reads back, as
// JSON. Used by the time-zone test, which starts it with TZ set: a time zone is a process's, fixed
// when it starts. Imports the built package, as an application would.
// Usage: node time-zone-writer.mjs <sqlite file> <postgres schema> (DATABASE_URL names the server)
import { DataSource } from 'typeorm';
import { PostgresJobStore, SqliteJobStore } from '../../dist/lib/index.js';
import { MAX_INSTANT_MS, MIN_INSTANT_MS } from '../../dist/lib/store-kit/index.js';
import { MemoryJobStore } from '../../dist/lib/testing/index.js';

const [sqliteFile, schema] = process.argv.slice(2);
const INSTANTS = [Date.UTC(1850, 0, 1), Date.UTC(1899, 11, 31, 23, 59, 59, 999), Date.UTC(1, 5, 15, 12, 0, 0, 1), MIN_INSTANT_MS, MAX_INSTANT_MS];
const START_AT = Date.UTC(1850, 0, 1);

async function roundTrip(store) {
  const read = [];
  for (const ms of INSTANTS) {
    const { id } = await store.jobEnqueue({ job: { name: 'tz.probe', payload: ms, runAt: new Date(ms) } });
    const enqueued = (await store.jobGet({ jobId: id })).runAt.getTime();
    // A uniqueKey `replace` rewrites a holder's run time: from a later instant back to this one.
    const key = `k${read.length}`;
    const { id: held } = await store.jobEnqueue({ job: { name: 'tz.probe', payload: 0, runAt: new Date(Date.UTC(2000, 0, 1)), uniqueKey: key } });
    await store.jobEnqueue({ job: { name: 'tz.probe', payload: ms, runAt: new Date(ms), uniqueKey: key, uniqueKeyMode: 'replace' } });
    const replaced = (await store.jobGet({ jobId: held })).runAt.getTime();
    // An operator action writes the row's instants back.
    await store.jobCancel({ jobId: id });
    read.push({ ms, enqueued, replaced, cancelled: (await store.jobGet({ jobId: id })).runAt.getTime() });
  }
  const { schedule } = await store.scheduleUpsert({ schedule: { name: 'tz.since', everyMs: 86_400_000, startAt: new Date(START_AT) } });
  const anchorAt = (await store.scheduleGet({ scheduleId: schedule.id })).recurrence.anchorAt.getTime();
  return { read, startAt: START_AT, anchorAt };
}

const results = { offsetMinutes: new Date(START_AT).getTimezoneOffset() };
results.memory = await roundTrip(new MemoryJobStore());
const sqlite = await new DataSource({ type: 'better-sqlite3', database: sqliteFile }).initialize();
const sqliteStore = new SqliteJobStore({ dataSource: sqlite });
await sqliteStore.migrate();
results.sqlite = await roundTrip(sqliteStore);
await sqlite.destroy();
const postgres = await new DataSource({ type: 'postgres', url: process.env.DATABASE_URL, extra: { max: 2 } }).initialize();
const postgresStore = new PostgresJobStore({ dataSource: postgres, schema });
await postgresStore.migrate();
results.postgres = await roundTrip(postgresStore);
await postgresStore.close();
await postgres.destroy();
process.stdout.write(JSON.stringify(results));
