// The dashboard's page sizes at the two shapes of issue 35 item 9: the overview with 20,000 queues,
// and a job with 2,000 failed attempts of 8 KB errors; plus the job page with its payload revealed
// and the dead letters at 500 distinct errors. Runs the standalone dashboard of `--lib DIR`'s
// dist/ (default this checkout; build it first) on an in-memory store and prints each page's bytes,
// so the build before a change and the build after it can be compared.
//
// Usage: node bench/diagnose/dashboard-page-sizes.mjs [--lib DIR] [--queues 20000] [--attempts 2000]
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    lib: { type: 'string', default: new URL('../..', import.meta.url).pathname },
    queues: { type: 'string', default: '20000' },
    attempts: { type: 'string', default: '2000' },
  },
});
const root = resolve(values.lib);
const { MemoryJobStore } = await import(pathToFileURL(join(root, 'dist/lib/testing/index.js')).href);
const { startDashboardServer } = await import(pathToFileURL(join(root, 'dist/lib/dashboard/index.js')).href);

const store = new MemoryJobStore();
const queues = Number(values.queues);
for (let i = 0; i < queues; i += 1000) {
  await store.jobEnqueueMany({ jobs: Array.from({ length: Math.min(1000, queues - i) }, (_, j) => ({ name: 'work', payload: {}, queue: `queue-${String(i + j).padStart(5, '0')}` })) });
}
const attempts = Number(values.attempts);
const error = (n) => `upstream refused attempt ${n}\n${'    at frame (/srv/app/handlers/charge.ts:1:7)\n'.repeat(200)}`.slice(0, 8_192);
const { id } = await store.jobEnqueue({ job: { name: 'charge', payload: { note: 'x'.repeat(200_000) }, queue: 'failing', maxAttempts: attempts + 1 } });
for (let attempt = 1; attempt <= attempts; attempt++) {
  await store.jobClaim({ workerId: 'w', limit: 1, queues: ['failing'], leaseMs: 30_000 });
  await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt, kind: 'failed', error: error(attempt), retryDelayMs: 0 }] });
}
for (let i = 0; i < 500; i++) {
  const dead = await store.jobEnqueue({ job: { name: 'ship', payload: {}, queue: 'dead', maxAttempts: 1 } });
  await store.jobClaim({ workerId: 'w', limit: 1, queues: ['dead'], leaseMs: 30_000 });
  await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: dead.id, attempt: 1, kind: 'failed', error: `order ${100000 + i} not found\n${'  at ship.ts:1\n'.repeat(50)}`, retryDelayMs: 0 }] });
}

const server = await startDashboardServer({ store });
const pages = [
  ['overview, 20,000 queues', '/'],
  ['overview, live refresh', '/', { 'x-dashboard-refresh': '1' }],
  [`job, ${attempts} failed attempts`, `/jobs/${id}`],
  ['job, payload revealed', `/jobs/${id}?reveal=payload`],
  ['job, refresh of a revealed payload', `/jobs/${id}?reveal=payload`, { 'x-dashboard-refresh': '1' }],
  ['dead letters, 500 errors with ids', '/dead-letters'],
];
console.log(`lib ${root}`);
for (const [label, path, headers] of pages) {
  const response = await fetch(server.url + path, { headers });
  const bytes = (await response.arrayBuffer()).byteLength;
  console.log(`${label.padEnd(40)} ${String(response.status).padEnd(4)} ${(bytes / 1024).toFixed(1).padStart(9)} KiB`);
}
await server.close();
