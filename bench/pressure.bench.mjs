// Pressure: each system under a fixed offered rate through phases of clean load, a disturbance
// (a held xid, overlapping REPEATABLE READ readers, or 1.5× overload) and recovery, then the time
// to drain what is left. On a private PostgreSQL with autovacuum on (bench/pressure/server.mjs):
// the machine's shared server has it off, and these scenarios are about vacuum.
// Usage: node bench/pressure.bench.mjs [--quick] [--systems ours,graphile,pgboss] [--scenarios held,readers,overload]
//   [--rate 800] [--clean-s 120] [--held-s 180] [--recovery-s 120] [--window-s 10] [--drain-cap-s 300]
//   [--reader-idle-s 20] [--concurrency 32] [--label before]
// Writes bench/results/pressure-<label>-<scenario>.json; see bench/README.md, "Pressure".
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { Server } from './peers/cell.mjs';
import { POOL, pressureCell } from './pressure/cell.mjs';
import { printCell } from './pressure/report.mjs';
import { scenarios } from './pressure/scenarios.mjs';
import { describe, pressureServer } from './pressure/server.mjs';
import { pressureVariant } from './pressure/variants.mjs';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    systems: { type: 'string', default: 'ours,graphile,pgboss' },
    scenarios: { type: 'string', default: 'held,readers,overload' },
    rate: { type: 'string' },
    'clean-s': { type: 'string' },
    'held-s': { type: 'string' },
    'recovery-s': { type: 'string' },
    'window-s': { type: 'string' },
    'drain-cap-s': { type: 'string' },
    'reader-idle-s': { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '32' },
    label: { type: 'string' },
  },
});
// --quick: half the rate and a third of the phases, with windows short enough to show a trend.
const defaults = values.quick
  ? { rate: 400, cleanS: 20, heldS: 40, recoveryS: 20, windowS: 5, drainCapS: 120 }
  : { rate: 800, cleanS: 120, heldS: 180, recoveryS: 120, windowS: 10, drainCapS: 300 };
const flag = (name, key) => (values[name] === undefined ? defaults[key] : Number(values[name]));
const opts = {
  rate: flag('rate', 'rate'),
  cleanS: flag('clean-s', 'cleanS'),
  heldS: flag('held-s', 'heldS'),
  recoveryS: flag('recovery-s', 'recoveryS'),
  windowS: flag('window-s', 'windowS'),
  drainCapS: flag('drain-cap-s', 'drainCapS'),
  readerIdleS: Number(values['reader-idle-s']),
};
const concurrency = Number(values.concurrency);
const label = values.label ?? (values.quick ? 'quick' : 'full');
if (!/^[\w.-]+$/.test(label)) throw new Error(`--label must be a plain file-name part; got ${label}`);
const chosenScenarios = values.scenarios.split(',');
for (const id of chosenScenarios) if (!scenarios[id]) throw new Error(`--scenarios: no scenario ${id}; known: ${Object.keys(scenarios).join(', ')}`);
const chosenVariants = values.systems.split(',').map((name) => pressureVariant(name, concurrency));

// SIGINT and SIGTERM become an exit, whose handlers kill the worker processes and stop the server.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const pgServer = await pressureServer();
const { version, settings } = await describe(pgServer.url);
const server = new Server(pgServer.url);
const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return null;
  }
})();
const base = {
  date: new Date().toISOString(),
  label,
  commit,
  cores: cpus().length,
  node: process.version,
  server: pgServer.label,
  postgres: version,
  settings,
  rate: opts.rate,
  phases: { cleanS: opts.cleanS, heldS: opts.heldS, recoveryS: opts.recoveryS, windowS: opts.windowS, drainCapS: opts.drainCapS, readerIdleS: opts.readerIdleS },
  concurrency,
  workerProcesses: 1,
  workerPool: POOL,
  systems: Object.fromEntries(chosenVariants.map((v) => [v.name, { variant: v.variantId, label: v.label, settings: v.settings }])),
};
console.log(`pressure bench (${label}): ${base.cores} cores, PostgreSQL ${version} (${pgServer.label})`);
// The settings that decide how soon dead tuples go (meta.settings has every autovacuum setting).
const shown = ['autovacuum', 'autovacuum_naptime', 'autovacuum_vacuum_scale_factor', 'autovacuum_vacuum_threshold', 'autovacuum_vacuum_cost_delay', 'autovacuum_vacuum_cost_limit', 'autovacuum_max_workers', 'shared_buffers', 'fsync', 'synchronous_commit'];
console.log(`  server settings: ${shown.map((k) => `${k}=${settings[k]}`).join(', ')}`);
console.log(`  offered ${opts.rate} jobs/s; phases ${opts.cleanS}/${opts.heldS}/${opts.recoveryS} s, windows of ${opts.windowS} s, drain cap ${opts.drainCapS} s`);
if (settings.autovacuum !== 'on') {
  console.warn(`\n  !!! WARNING: autovacuum is OFF on ${pgServer.label}. Every scenario here is about vacuum: with it off,`);
  console.warn('  !!! dead tuples are never reclaimed and the figures measure the server, not the queues.\n');
}

try {
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  for (const scenarioId of chosenScenarios) {
    const scenario = scenarios[scenarioId];
    console.log(`\n## ${scenarioId}: ${scenario.what}`);
    const cells = [];
    for (const variant of chosenVariants) {
      if (variant.unsupported) {
        console.log(`  ${variant.name}: left out, this build refuses its settings (${variant.unsupported})`);
        cells.push({ system: variant.name, skipped: variant.unsupported });
        continue;
      }
      try {
        const cell = await pressureCell(server, variant, scenarioId, scenario, opts);
        printCell(scenarioId, cell, opts.rate);
        cells.push(cell);
      } catch (error) {
        // pg-boss and the others run "where they run": one failing system does not end the run.
        console.error(`  ${variant.name}/${scenarioId} failed: ${error.stack ?? error}`);
        cells.push({ system: variant.name, error: String(error.message ?? error) });
      }
    }
    const file = new URL(`./results/pressure-${label}-${scenarioId}.json`, import.meta.url);
    writeFileSync(file, `${JSON.stringify({ meta: { ...base, scenario: scenarioId, what: scenario.what }, cells }, null, 1)}\n`);
    console.log(`\nwrote ${file.pathname}`);
  }
} finally {
  await server.close();
  await pgServer.stop();
}
