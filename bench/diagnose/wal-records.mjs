// What a drain writes to the WAL, by record type: runs one drain cell per variant and reads the
// cell's stretch of the WAL with pg_walinspect (PostgreSQL 15+, superuser), per job. Shows which
// writes a design change would remove (heap updates that are not HOT, index inserts, history rows).
// Usage: node bench/diagnose/wal-records.mjs [--variants ours-tuned,graphile-tuned] [--jobs 20000] [--top 14]
import { parseArgs } from 'node:util';
import pg from 'pg';
import { headline } from '../systems/index.mjs';
import { drainCell } from '../workloads/drain.mjs';
import { Server } from '../peers/cell.mjs';
import { postgres } from '../support.mjs';

const { values } = parseArgs({
  options: { variants: { type: 'string', default: 'ours-tuned,graphile-tuned' }, jobs: { type: 'string', default: '20000' }, top: { type: 'string', default: '14' } },
});
const pgServer = await postgres();
const server = new Server(pgServer.url);
const admin = new pg.Client({ connectionString: pgServer.url });
await admin.connect();
await admin.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
// The cell's database is dropped before its WAL is read, and the drop's checkpoint would recycle
// the segments: the server keeps 4 GB of WAL while this runs, and gets its setting back after.
const { rows: kept } = await admin.query(`SELECT setting FROM pg_settings WHERE name = 'wal_keep_size'`);
await admin.query(`ALTER SYSTEM SET wal_keep_size = '4GB'`);
await admin.query('SELECT pg_reload_conf()');
try {
  for (const v of values.variants.split(',')) {
    const cell = await drainCell(server, v, { c: headline[v], jobs: Number(values.jobs), capMs: 120_000 });
    const { rows } = await admin.query(
      `SELECT "resource_manager/record_type" AS kind, count, record_size, fpi_size
       FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) WHERE count > 0 ORDER BY combined_size DESC`,
      cell.lsns,
    );
    const perJob = (n) => (Number(n) / cell.done).toFixed(2);
    console.log(`\n${v}: ${Math.round(cell.jobsPerSec)} jobs/s, ${Math.round(cell.walBytesPerJob)} WAL bytes per job`);
    console.log('record                          per job   bytes/job   FPI bytes/job');
    for (const r of rows.slice(0, Number(values.top))) {
      console.log(`${r.kind.padEnd(32)}${perJob(r.count).padStart(7)}${perJob(r.record_size).padStart(12)}${perJob(r.fpi_size).padStart(16)}`);
    }
  }
} finally {
  await admin.query(kept[0].setting === '0' ? 'ALTER SYSTEM RESET wal_keep_size' : `ALTER SYSTEM SET wal_keep_size = '${Number(kept[0].setting)}MB'`);
  await admin.query('SELECT pg_reload_conf()');
}
await admin.end();
await server.close();
await pgServer.stop();
