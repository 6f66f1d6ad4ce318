// The printed form of a pressure cell: one markdown phase table (the text that goes into
// bench/README.md), the drain, and the started rate window by window. Pickup is enqueue commit →
// handler start, of the jobs ENQUEUED in the phase; "left at end" counts those not started when it ended.
import { fmt, table } from '../support.mjs';

const dash = '—';
const num = (v, digits = 0) => (Number.isFinite(v) ? fmt(v, digits) : dash);
const ms = (v) => (!Number.isFinite(v) ? dash : v < 10 ? `${fmt(v, 1)} ms` : v < 1_000 ? `${fmt(v)} ms` : `${fmt(v / 1_000, 1)} s`);

export function printCell(scenarioId, cell, rate) {
  console.log(`\n**${scenarioId}**: ${cell.label} (${cell.system}), offered ${fmt(rate)} jobs/s`);
  console.log(`settings ${JSON.stringify(cell.settings)}\n`);
  table(
    ['phase', 's', 'offered/s', 'enqueued/s', 'started/s', 'window median', 'started/offered', 'pickup p50', 'p95', 'p99', 'max', 'left at end', 'peak depth', 'peak dead (jobs)'],
    cell.phases.map((p) =>
      p.name === 'drain'
        ? // Nothing is offered or enqueued in the drain; its rate means something once it lasts a while.
          [p.name, num(p.seconds, 1), dash, dash, p.seconds >= 1 ? num(p.startedPerSec) : dash, dash, dash, dash, dash, dash, dash, dash, num(p.peakDepth), num(p.peakJobsDead)]
        : [
            p.name,
            num(p.seconds),
            num(p.offered),
            num(p.enqueuedPerSec),
            num(p.startedPerSec),
            num(p.startedPerSecWindowMedian),
            num(p.startedVsOffered, 2),
            ms(p.pickupMs.p50),
            ms(p.pickupMs.p95),
            ms(p.pickupMs.p99),
            ms(p.pickupMs.max),
            num(p.leftAtEnd),
            num(p.peakDepth),
            num(p.peakJobsDead),
          ],
    ),
  );
  const drain = cell.drain.capped ? `not empty after the ${cell.drain.capS} s cap (${fmt(cell.drain.left)} left)` : `${num(cell.drain.seconds, 1)} s`;
  console.log(`\ndrain to empty: ${drain}; ${fmt(cell.enqueued)} enqueued, ${fmt(cell.neverStarted)} never started, ${fmt(cell.repeats)} started again`);
  for (const d of cell.disturbances) console.log(`${d.phase}: ${JSON.stringify(Object.fromEntries(Object.entries(d).filter(([k]) => k !== 'phase')))}`);
  const loaded = cell.phases.filter((p) => p.name !== 'drain');
  const byPhase = loaded.map((p) => cell.windows.filter((w) => w.phase === p.name).map((w) => num(w.startedPerSec)).join(' '));
  console.log(`started/s by window (${loaded.map((p) => p.name).join(' | ')}): ${byPhase.join(' | ')}`);
}
