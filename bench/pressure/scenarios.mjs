// The pressure scenarios: a fixed offered rate through phases, the middle one disturbed, then the
// producer stops and the backlog drains. Each phase: { name, seconds, load (× the offered rate),
// disturb?(ctx) → { end() } } where ctx = { url, table } of the cell's database.
import { holdXid, readers } from './horizon.mjs';

export const scenarios = {
  held: {
    what: 'one session holds an xid (BEGIN; SELECT txid_current(); then idle) through the middle phase',
    phases: (o) => [
      { name: 'clean', seconds: o.cleanS, load: 1 },
      { name: 'held', seconds: o.heldS, load: 1, disturb: ({ url }) => holdXid(url) },
      { name: 'recovery', seconds: o.recoveryS, load: 1 },
    ],
  },
  readers: {
    what: '4 overlapping REPEATABLE READ readers count the jobs table through the middle phase',
    phases: (o) => [
      { name: 'clean', seconds: o.cleanS, load: 1 },
      { name: 'readers', seconds: o.heldS, load: 1, disturb: ({ url, table }) => readers(url, table, { count: 4, idleS: o.readerIdleS }) },
      { name: 'recovery', seconds: o.recoveryS, load: 1 },
    ],
  },
  overload: {
    what: '1.5× the offered rate through the middle phase',
    phases: (o) => [
      { name: 'clean', seconds: o.cleanS, load: 1 },
      { name: 'overload', seconds: o.heldS, load: 1.5 },
      { name: 'recovery', seconds: o.recoveryS, load: 1 },
    ],
  },
};

/**
 * The cell's timetable, relative to its start: the phases back to back and a 'drain' phase of at
 * most drainCapS, each cut into windows of windowS (a phase's last window may be shorter).
 */
export function plan(phases, { rate, windowS, drainCapS }) {
  const all = [...phases, { name: 'drain', seconds: drainCapS, load: 0 }];
  const out = { phases: [], windows: [] };
  let at = 0;
  for (const [i, phase] of all.entries()) {
    const endMs = at + phase.seconds * 1_000;
    out.phases.push({ ...phase, offered: rate * phase.load, startMs: at, endMs });
    for (let w = at; w < endMs; w += windowS * 1_000) out.windows.push({ phase: i, startMs: w, endMs: Math.min(endMs, w + windowS * 1_000) });
    at = endMs;
  }
  return out;
}
