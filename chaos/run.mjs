// The chaos test on a real database (`npm run chaos`, which builds first): PostgreSQL by default,
// MariaDB with `--store mariadb`. Worker and producer processes run the real SchedulerModule
// against one database while seeded faults hit them: kill -9, killed sessions
// (pg_terminate_backend, LISTEN connections included; KILL CONNECTION on MariaDB), database
// restarts, and workers paused past their lease. Then the faults stop, everything must drain
// (liveness), and SQL checks count every safety anomaly by name (see chaos/checks.ts). Exit code 1
// if any count is not 0.
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Cluster } from './cluster.mjs';
import { FaultInjector, planFaults } from './faults.mjs';
import { dumpTables, loadLogs } from './logs.mjs';
import { openMariadb } from './mariadb.mjs';
import { parseOptions } from './options.mjs';
import { openPostgres } from './postgres.mjs';
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
const lib = await import(pathToFileURL(join(runDir, 'dist/lib/index.js')).href);
const { SeededRandom } = await import(pathToFileURL(join(runDir, 'dist/lib/worker/public-api.js')).href);
const checks = await import(pathToFileURL(join(runDir, 'dist/chaos/checks.js')).href);
const { runChecks, safe, SAFETY } = checks;

// The database: its server, the fresh schemas (or databases), the scheduler's tables migrated and
// the lease audit installed, before any process starts.
const db = await (options.store === 'mariadb' ? openMariadb : openPostgres)({ lib, checks, runDir });
const { names } = db;

const random = new SeededRandom(options.seed);
const durationMs = options.duration * 1_000;
const kinds = db.faultKinds;
const plan = planFaults(random, durationMs, kinds);
const planned = Object.fromEntries(kinds.map((k) => [k, plan.filter((f) => f.kind === k).length]));
const storeFlag = options.store === 'postgres' ? '' : ` --store ${options.store}`;
console.log(
  `chaos: seed ${options.seed}, ${options.duration} s of faults, ${options.workers} workers + ${options.producers} producers, lease ${options.leaseMs} ms, ` +
    `${options.rate} tx/s per producer, ${db.name} ${db.server}, ${cpus().length} cores`,
);
console.log(`chaos: fault plan ${JSON.stringify(planned)}; repeat with: npm run chaos --${storeFlag} --seed ${options.seed} --duration ${options.duration} --workers ${options.workers} --producers ${options.producers} --lease-ms ${options.leaseMs} --rate ${options.rate}`);
for (const note of db.notes) console.log(`chaos: ${note}`);
console.log(`chaos: logs in ${runDir}`);

let phase = 'starting';
const unexpectedExits = [];
const cluster = new Cluster({
  runDir,
  appMain: join(runDir, 'dist/chaos/app/main.js'),
  env: {
    ...db.appEnv,
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
  await db.abort()?.catch(() => {});
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
    db,
    respawn: (role, slot) => respawn(role, slot),
    random,
    leaseMs: options.leaseMs,
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
    remaining = await db.unfinished().catch(() => Infinity);
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
  const logs = await loadLogs(db, join(runDir, 'exec'), injector.pauses);
  const { safety, observed } = await runChecks(db.sql, names, options.leaseMs, db.dialect);
  // The production checker over the store's own history, beside the chaos checks' own tables.
  const verified = await db.verify();
  const { entries, jobs, attempts, leases, releases, jobsCompared, capStarts, rateStarts, uniqueKeysTaken, occurrencesMinted } = verified.checked;
  const history = { entries, jobs, attempts, leases, releases, jobsCompared, capStarts, rateStarts, uniqueKeysTaken, occurrencesMinted, violations: verified.violationCount };
  say(
    `verify: ${history.violations} broken promises in ${entries} history entries of ${jobs} jobs (${attempts} attempts, ${leases} ends of a lease judged, ${releases} releases of a dependant, ${capStarts} starts judged against a concurrency limit, ${rateStarts} against a rate, ${uniqueKeysTaken} unique keys and ${occurrencesMinted} occurrences against their holders; ${jobsCompared} jobs compared with their stored row)`,
  );
  for (const violation of verified.violations.slice(0, 20)) say(`verify: ${violation.rule}: ${violation.message}`);
  const liveness = { drained: remaining === 0, drainSeconds, remaining, unexpectedExits: unexpectedExits.length };
  // A run that enqueued or executed nothing proves nothing, so it cannot pass.
  const exercised = observed.jobs > 0 && observed.executions > 0;
  const passed = safe(safety) && liveness.drained && unexpectedExits.length === 0 && exercised && history.violations === 0;
  const run = {
    passed,
    seed: options.seed,
    durationSeconds: options.duration,
    workers: options.workers,
    producers: options.producers,
    leaseMs: options.leaseMs,
    store: options.store,
    server: `${db.name} ${db.server}`,
    faults: injector.counts,
    safety,
    observed,
    history,
    producers: logs.producers,
    liveness,
    wallSeconds: Math.round((Date.now() - started) / 1_000),
  };
  console.log(`\n${report(run, SAFETY)}\n`);
  if (unexpectedExits.length > 0) console.log(`processes that exited on their own: ${JSON.stringify(unexpectedExits)}`);
  if (!exercised) console.log('FAILED: the run committed or executed no jobs, so it checked nothing.');
  if (observed.staleRejected === 0) console.log('note: no stale report was observed in this run (no pause caught a handler that went on to report).');
  if (options.result) writeResult(options.result, run);
  if (!passed) await dumpTables(db, join(runDir, 'db'));

  await db.close({ drop: passed && !options.keep });
  if (!passed && db.external) console.log(`chaos: the run's schemas are kept: ${names.chaos} and ${names.scheduler}`);
  if (passed && !options.keep) rmSync(runDir, { recursive: true, force: true });
  console.log(`chaos: ${passed ? 'PASSED' : `FAILED (logs kept in ${runDir})`} in ${run.wallSeconds} s; seed ${options.seed}`);
  process.exit(passed ? 0 : 1);
} catch (error) {
  await abort(error);
}
