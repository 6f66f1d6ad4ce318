// What priorities cost the claim: the tuned drain of `--jobs` due jobs on an empty table, beside
// 1,000,000 future-dated jobs at the default priority, and beside 1,000,000 future-dated jobs in a
// mix of 10 priorities (-5 to 4) with every due job at priority 5, behind all of them: the case a
// claim that read the claim index as one range would walk every future-dated entry for. `mixed`
// also spreads the due jobs over the same 10 priorities. Medians of --runs rounds, cases
// interleaved. At a commit before priorities, run `--cases empty,futures` (the others set one).
// Usage: node bench/diagnose/priority-drain.mjs [--jobs 100000] [--futures 1000000] [--runs 3] [--cases empty,futures,behind,mixed]
import { parseArgs } from 'node:util';
import { headline } from '../systems/index.mjs';
import { drainCell } from '../workloads/drain.mjs';
import { Server } from '../peers/cell.mjs';
import { postgres } from '../support.mjs';

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '100000' }, futures: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '3' }, cases: { type: 'string', default: 'empty,futures,behind,mixed' } },
});
const jobs = Number(values.jobs);
const futures = Number(values.futures);
const tenPriorities = (payload) => (payload.k % 10) - 5;
const CASES = {
  empty: {},
  futures: { futures },
  behind: { futures, futurePriority: tenPriorities, duePriority: 5 },
  mixed: { futures, futurePriority: tenPriorities, duePriority: tenPriorities },
};
const ids = values.cases.split(',');
const pgServer = await postgres();
const server = new Server(pgServer.url);
const rates = Object.fromEntries(ids.map((id) => [id, []]));
for (let r = 0; r < Number(values.runs); r++) {
  for (const id of ids) {
    const cell = await drainCell(server, 'ours-tuned', { c: headline['ours-tuned'], jobs, capMs: 120_000, ...CASES[id] });
    rates[id].push(Math.round(cell.jobsPerSec));
    console.log(`  ${id}: ${rates[id].at(-1)} jobs/s, CPU ms/job node ${cell.cpuMsPerJob.toFixed(3)} server ${cell.serverCpuMsPerJob?.toFixed(3) ?? '–'}`);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const id of ids) console.log(`${id}: median ${median(rates[id])} jobs/s (${rates[id].join(', ')}), ${id}/empty = ${(median(rates[id]) / median(rates.empty ?? rates[id])).toFixed(2)}`);
await server.close();
await pgServer.stop();
