// The chaos test on real PostgreSQL (`npm run chaos`, which builds first). Worker and producer
// processes run the real SchedulerModule against one database while seeded faults hit them:
// kill -9, pg_terminate_backend (LISTEN connections included), database restarts, and workers
// paused past their lease. Then the faults stop, everything must drain (liveness), and SQL checks
// count every safety anomaly by name (see chaos/checks.ts). Exit code 1 if any count is not 0.
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir, cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { startEmbeddedPostgres } from '../scripts/embedded-postgres.mjs';
import { Cluster } from './cluster.mjs';
import { FAULT_KINDS, FaultInjector, planFaults } from './faults.mjs';
import { dumpTables, loadLogs } from './logs.mjs';
import { parseOptions } from './options.mjs';
import { report, writeResult } from './report.mjs';

const options = parseOptions(process.argv.slice(2));
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const started = Date.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}`);

// The processes run a snapshot of dist/, so a rebuild elsewhere during the run cannot change or
// remove what a respawned worker loads.
const runDir = mkdtempSync(join(tmpdir(), `durable-scheduler-chaos-${options.seed}-`));
for (const part of ['lib', 'chaos']) cpSync(join(root, 'dist', part), join(runDir, 'dist', part), { recursive: true });
writeFileSync(join(runDir, 'package.json'), '{ "type": "module" }\n');
symlinkSync(join(root, 'node_modules'), join(runDir, 'node_modules'));
const { PostgresJobStore } = await import(pathToFileURL(join(runDir, 'dist/lib/index.js')).href);
const { SeededRandom } = await import(pathToFileURL(join(runDir, 'dist/lib/worker/public-api.js')).href);
const { chaosTablesSql, leaseAuditSql, runChecks, safe, SAFETY } = await import(pathToFileURL(join(runDir, 'dist/chaos/checks.js')).href);

const external = process.env.DATABASE_URL;
const server = external ? null : await startEmbeddedPostgres('chaos', { onError: () => {} });
const url = external ?? server.url;
const pool = new pg.Pool({ connectionString: url, application_name: 'chaos-controller', max: 2 });
pool.on('error', () => {}); // idle connections die with every restart; the next query reconnects
const sql = async (text, params) => (await pool.query(text, params)).rows;
const version = (await sql('SHOW server_version'))[0].server_version;
const suffix = randomBytes(3).toString('hex');
const schema = `chaos_${suffix}`;
const schedulerSchema = `chaos_${suffix}_scheduler`;
await pool.query(chaosTablesSql(schema));
// The scheduler's tables exist before any process starts, so the lease audit sees every outcome.
const migrator = await new DataSource({ type: 'postgres', url, applicationName: 'chaos-controller' }).initialize();
await new PostgresJobStore({ dataSource: migrator, schema: schedulerSchema }).migrate();
await migrator.destroy();
await pool.query(leaseAuditSql({ chaos: schema, scheduler: schedulerSchema }));

const random = new SeededRandom(options.seed);
const durationMs = options.duration * 1_000;
const kinds = external ? FAULT_KINDS.filter((k) => k !== 'restart_db') : FAULT_KINDS;
const plan = planFaults(random, durationMs, kinds);
const planned = Object.fromEntries(kinds.map((k) => [k, plan.filter((f) => f.kind === k).length]));
console.log(
  `chaos: seed ${options.seed}, ${options.duration} s of faults, ${options.workers} workers + ${options.producers} producers, lease ${options.leaseMs} ms, ` +
    `${options.rate} tx/s per producer, PostgreSQL ${version} (${external ? 'DATABASE_URL' : 'embedded'}), ${cpus().length} cores`,
);
console.log(`chaos: fault plan ${JSON.stringify(planned)}; repeat with: npm run chaos -- --seed ${options.seed} --duration ${options.duration} --workers ${options.workers} --producers ${options.producers} --lease-ms ${options.leaseMs} --rate ${options.rate}`);
if (external) console.log('chaos: DATABASE_URL is set, so the database-restart fault is skipped (only the embedded server can be restarted).');
console.log(`chaos: logs in ${runDir}`);

let phase = 'starting';
const unexpectedExits = [];
const cluster = new Cluster({
  runDir,
  appMain: join(runDir, 'dist/chaos/app/main.js'),
  env: {
    CHAOS_DATABASE_URL: url,
    CHAOS_SCHEMA: schema,
    CHAOS_SCHEDULER_SCHEMA: schedulerSchema,
    CHAOS_SEED: String(options.seed),
    CHAOS_LEASE_MS: String(options.leaseMs),
    CHAOS_RATE: String(options.rate),
  },
  onExit: (member) => {
    if (member.expectedExit || phase === 'stopping') return;
    // A process the run did not kill died (after booting) or failed to boot: record it and replace it.
    if (member.ready) unexpectedExits.push({ name: member.name, ...member.exitInfo });
    say(`${member.name} exited on its own (${JSON.stringify(member.exitInfo)}${member.ready ? '' : ', during boot'}); replacing it`);
    if (!member.ready) return; // respawn() retries boots itself
    void respawn(member.role, member.slot);
  },
});

/** Starts a new incarnation in a slot and waits until it is ready, retrying a failed boot. */
async function respawn(role, slot) {
  for (let tries = 1; ; tries += 1) {
    const member = cluster.spawn(role, slot);
    if (await cluster.waitReady(member)) return member;
    if (!member.exitInfo) await cluster.terminate(member, 2_000);
    if (tries >= 10) throw new Error(`${role} ${slot} failed to boot 10 times; see ${runDir}/out`);
    await sleep(1_000);
  }
}

// Whatever goes wrong in the runner itself, leave no process or server behind.
const abort = async (reason) => {
  phase = 'stopping';
  console.error(`chaos: aborted: ${reason?.stack ?? reason}`);
  for (const member of cluster.members) {
    if (member.paused) member.child.kill('SIGCONT');
    member.child.kill('SIGKILL');
  }
  await server?.stop().catch(() => {});
  process.exit(reason === 'SIGINT' ? 130 : reason === 'SIGTERM' ? 143 : 1);
};
process.once('SIGINT', () => abort('SIGINT'));
process.once('SIGTERM', () => abort('SIGTERM'));
process.on('uncaughtException', abort);
process.on('unhandledRejection', abort);

try {
  // Start: all processes boot at once (migrations take an advisory lock).
  const slots = (n) => Array.from({ length: n }, (_, i) => i + 1);
  await Promise.all([...slots(options.workers).map((i) => respawn('worker', i)), ...slots(options.producers).map((i) => respawn('producer', i))]);
  say(`${options.workers} workers and ${options.producers} producers are up; faults start`);

  // Safety phase.
  phase = 'safety';
  const injector = new FaultInjector({
    cluster,
    sql,
    restartDatabase: server ? (o) => server.restart(o) : null,
    respawn: (role, slot) => respawn(role, slot),
    random,
    leaseMs: options.leaseMs,
    schedulerSchema,
    say,
  });
  const safetyStart = Date.now();
  for (const fault of plan) {
    await sleep(safetyStart + fault.at - Date.now());
    await injector.inject(fault.kind);
  }
  await sleep(safetyStart + durationMs - Date.now());

  // Liveness phase: faults stop, paused workers resume, replacements boot, producers finish their
  // last transaction and leave, and every committed job must reach a terminal state.
  phase = 'liveness';
  say('faults stop; waiting for every committed job to finish');
  await injector.settle();
  await Promise.all(cluster.live('producer').map((m) => cluster.terminate(m)));
  const drainStart = Date.now();
  const drainTimeoutMs = 120_000;
  let remaining = Infinity;
  let lastSaid = 0;
  while (Date.now() - drainStart < drainTimeoutMs) {
    remaining = Number(
      (
        await sql(`SELECT count(*) AS n FROM "${schema}".enqueued e LEFT JOIN "${schedulerSchema}".jobs j ON j.id = e.job_id
                   WHERE j.id IS NULL OR j.state NOT IN ('succeeded', 'dead_lettered', 'cancelled', 'quarantined')`).catch(() => [{ n: Infinity }])
      )[0].n,
    );
    if (remaining === 0) break;
    if (Date.now() - lastSaid > 10_000) {
      say(`${remaining} job(s) still to finish`);
      lastSaid = Date.now();
    }
    await sleep(500);
  }
  const drainSeconds = Math.round((Date.now() - drainStart) / 1_000);
  say(remaining === 0 ? `drained in ${drainSeconds} s` : `NOT drained: ${remaining} job(s) left after ${drainSeconds} s`);
  phase = 'stopping';
  await Promise.all(cluster.members.map((m) => cluster.terminate(m)));

  // Verdict.
  const logs = await loadLogs(sql, schema, join(runDir, 'exec'), injector.pauses);
  const { safety, observed } = await runChecks(sql, { chaos: schema, scheduler: schedulerSchema }, options.leaseMs);
  const liveness = { drained: remaining === 0, drainSeconds, remaining, unexpectedExits: unexpectedExits.length };
  // A run that enqueued or executed nothing proves nothing, so it cannot pass.
  const exercised = observed.jobs > 0 && observed.executions > 0;
  const passed = safe(safety) && liveness.drained && unexpectedExits.length === 0 && exercised;
  const run = {
    passed,
    seed: options.seed,
    durationSeconds: options.duration,
    workers: options.workers,
    producers: options.producers,
    leaseMs: options.leaseMs,
    postgres: `${version} (${external ? 'DATABASE_URL' : 'embedded'})`,
    faults: injector.counts,
    safety,
    observed,
    producers: logs.producers,
    liveness,
    wallSeconds: Math.round((Date.now() - started) / 1_000),
  };
  console.log(`\n${report(run, SAFETY)}\n`);
  if (unexpectedExits.length > 0) console.log(`processes that exited on their own: ${JSON.stringify(unexpectedExits)}`);
  if (!exercised) console.log('FAILED: the run committed or executed no jobs, so it checked nothing.');
  if (observed.staleRejected === 0) console.log('note: no stale report was observed in this run (no pause caught a handler that went on to report).');
  if (options.result) writeResult(options.result, run);
  if (!passed) await dumpTables(sql, join(runDir, 'db'), { chaos: schema, scheduler: schedulerSchema });

  await pool.end();
  if (passed && !options.keep) {
    if (external) {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`DROP SCHEMA "${schema}" CASCADE; DROP SCHEMA "${schedulerSchema}" CASCADE`);
      await admin.end();
    }
    rmSync(runDir, { recursive: true, force: true });
  }
  await server?.stop();
  console.log(`chaos: ${passed ? 'PASSED' : `FAILED (logs kept in ${runDir})`} in ${run.wallSeconds} s; seed ${options.seed}`);
  process.exit(passed ? 0 : 1);
} catch (error) {
  await abort(error);
}
