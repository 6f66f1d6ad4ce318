// What a snooze costs (docs/snooze.md): the drain of `--jobs` due jobs whose handler returns at
// once (`plain`), beside the same jobs each snoozed once for 0 ms before they succeed (`snooze`),
// and each failed once with a retry delay of up to 20 ms (`retry`). A snooze is an outcome write and one
// more claim, as a retry is; the claim path itself is unchanged. Medians of --runs rounds, cases
// interleaved, at the defaults and tuned.
// Usage: node bench/snooze.bench.mjs [--jobs 20000] [--runs 3] [--variants ours-default,ours-tuned]
import { parseArgs } from 'node:util';
import { headline } from './systems/index.mjs';
import { drainCell } from './workloads/drain.mjs';
import { Server } from './peers/cell.mjs';
import { postgres } from './support.mjs';

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '20000' }, runs: { type: 'string', default: '3' }, variants: { type: 'string', default: 'ours-default,ours-tuned' } },
});
const jobs = Number(values.jobs);
const CASES = { plain: 'noop', snooze: 'snooze-once', retry: 'fail-once' };
const variantIds = values.variants.split(',');
const pgServer = await postgres();
const server = new Server(pgServer.url);
const rates = {};
for (let r = 0; r < Number(values.runs); r++) {
  for (const variant of variantIds) {
    for (const [id, mode] of Object.entries(CASES)) {
      const cell = await drainCell(server, variant, { c: headline[variant], jobs, capMs: 180_000, mode });
      (rates[`${variant} ${id}`] ??= []).push(Math.round(cell.jobsPerSec));
      console.log(`  ${variant} ${id}: ${Math.round(cell.jobsPerSec)} jobs/s, commits/job ${cell.commitsPerJob?.toFixed(3) ?? '–'}, server CPU ms/job ${cell.serverCpuMsPerJob?.toFixed(3) ?? '–'}${cell.capped ? ' (capped)' : ''}`);
    }
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const variant of variantIds) {
  const plain = median(rates[`${variant} plain`]);
  for (const id of Object.keys(CASES)) {
    const m = median(rates[`${variant} ${id}`]);
    console.log(`${variant} ${id}: median ${m} jobs/s (${rates[`${variant} ${id}`].join(', ')}), ${id}/plain = ${(m / plain).toFixed(2)}`);
  }
}
await server.close();
await pgServer.stop();
