// Prints the verdict of a chaos run as markdown tables (the same text goes into
// docs/reliability.md) and, with --result, writes it as JSON for .ci/summarize.mjs.
import { writeFileSync } from 'node:fs';

const FAULT_ROWS = [
  ['kill_worker', 'kill -9 of a worker (mid-attempt when it held leases), then a replacement'],
  ['kill_producer', 'kill -9 of a producer (mid-transaction or between), then a replacement'],
  ['terminate_backends', 'pg_terminate_backend rounds'],
  ['terminated_backends', '  app connections terminated'],
  ['terminated_listen', '  of them LISTEN connections'],
  ['kill_connections', 'KILL CONNECTION rounds'],
  ['killed_connections', '  app sessions killed'],
  ['killed_in_transaction', '  of them inside an open transaction'],
  ['pause_worker', 'SIGSTOP of a worker for longer than its lease, then SIGCONT'],
  ['restart_db', 'database server restarts (same data directory and port)'],
  ['skipped', 'faults skipped (no target at that moment)'],
];

const OBSERVED_ROWS = [
  ['jobs', 'jobs committed by producers'],
  ['executions', 'handler executions (append-only logs)'],
  ['reExecutions', 're-executions: runs beyond the first of a job (retries, killed or stale attempts)'],
  ['staleRejected', 'stale reports rejected by the fence'],
  ['dropped', 'outcomes a worker dropped itself, knowing its lease was gone'],
  ['maxPerKey', 'most applied executions of one tenant running at once (limit 2)'],
  ['sweptLeases', 'last attempts whose lease lapsed, dead-lettered by the sweep'],
];

export function table(header, rows) {
  return [`| ${header[0]} | ${header[1]} |`, '|---|---:|', ...rows.map(([label, value]) => `| ${label} | ${value} |`)].join('\n');
}

export function report(run, safetyLabels) {
  // Each database has its own session fault; only its rows are printed.
  const faults = table(['Fault injected', 'count'], FAULT_ROWS.filter(([key]) => key in run.faults).map(([key, label]) => [label, run.faults[key]]));
  const safety = table(['Safety check (must be 0)', 'count'], safetyLabels.map(([key, label]) => [label, run.safety[key]]));
  const observed = table(
    ['Observed (allowed)', 'count'],
    [
      ...OBSERVED_ROWS.map(([key, label]) => [label, run.observed[key]]),
      ['producer transactions committed / rolled back on purpose / failed by a fault', `${run.producers.committed} / ${run.producers.rolledBack} / ${run.producers.failed}`],
    ],
  );
  const liveness = table(
    ['Liveness', 'result'],
    [
      ['every committed job terminal after the faults stopped', run.liveness.drained ? `yes, in ${run.liveness.drainSeconds} s` : `NO: ${run.liveness.remaining} left after ${run.liveness.drainSeconds} s`],
      ['processes that exited on their own (must be 0)', run.liveness.unexpectedExits],
    ],
  );
  return [faults, safety, observed, liveness].join('\n\n');
}

export function writeResult(file, run) {
  writeFileSync(file, `${JSON.stringify({ kind: 'chaos', ...run }, null, 2)}\n`);
}
