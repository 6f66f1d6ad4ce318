// The headline drain of a few variants, side by side, without the rest of the bench: for checking
// a change to the drain path in minutes. Medians of --runs rounds.
// Usage: node bench/diagnose/drain-peers.mjs [--variants ours-tuned,graphile-tuned,raw] [--jobs 100000] [--runs 3] [--c ours-tuned=400]
import { parseArgs } from 'node:util';
import { headline } from '../systems/index.mjs';
import { drainCell } from '../workloads/drain.mjs';
import { Server } from '../peers/cell.mjs';
import { postgres } from '../support.mjs';

const { values } = parseArgs({
  options: { variants: { type: 'string', default: 'ours-tuned,graphile-tuned,raw' }, jobs: { type: 'string', default: '100000' }, runs: { type: 'string', default: '3' }, c: { type: 'string', multiple: true, default: [] } },
});
const concurrency = { ...headline, ...Object.fromEntries(values.c.map((pair) => pair.split('=')).map(([v, c]) => [v, Number(c)])) };
const ids = values.variants.split(',');
const pgServer = await postgres();
const server = new Server(pgServer.url);
const rates = Object.fromEntries(ids.map((v) => [v, []]));
for (let r = 0; r < Number(values.runs); r++) {
  for (const v of ids) {
    const cell = await drainCell(server, v, { c: concurrency[v], jobs: Number(values.jobs), capMs: 120_000 });
    rates[v].push(Math.round(cell.jobsPerSec));
    console.log(`  ${v} (c=${concurrency[v]}): ${rates[v].at(-1)} jobs/s, commits/job ${cell.commitsPerJob?.toFixed(3) ?? '–'}, WAL B/job ${cell.walBytesPerJob === null ? '–' : Math.round(cell.walBytesPerJob)}, FPI/job ${cell.fpiPerJob?.toFixed(3) ?? '–'}, checkpoints ${cell.checkpoints ?? '–'}, CPU ms/job node ${cell.cpuMsPerJob.toFixed(3)} server ${cell.serverCpuMsPerJob?.toFixed(3) ?? '–'}`);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = ids[0];
for (const v of ids) console.log(`${v}: median ${median(rates[v])} jobs/s (${rates[v].join(', ')}), ${base}/${v} = ${(median(rates[base]) / median(rates[v])).toFixed(2)}`);
await server.close();
await pgServer.stop();
