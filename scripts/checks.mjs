// `npm test`'s pretest: builds dist/ and runs the four type checks, two at a time. Each is one
// single-threaded tsc (the build emits lib/, sample/ and chaos/; the checks read sources only, never
// dist/), so on a 2-core machine running them in pairs takes about half the time of running them in
// a row. Each command's output is printed whole when it ends, and the script fails if any failed.
// `node scripts/checks.mjs typecheck` runs the four checks without the build (`npm run typecheck`).
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

/** Each check as [label, argv]; the biggest first, so the last pair to finish is a short one. */
const TYPECHECKS = [
  ['typecheck lib, test, bench and scripts', [tsc, '-p', 'tsconfig.json', '--noEmit']],
  ['typecheck test/sample', [tsc, '-p', 'test/sample']],
  ['typecheck test/types (its deliberate errors must not compile)', [tsc, '-p', 'test/types']],
  ['typecheck test-e2e', [tsc, '-p', 'test-e2e']],
];
const BUILD = ['build dist/', [join(root, 'scripts/build.mjs')]];

const jobs = process.argv[2] === 'typecheck' ? TYPECHECKS : [BUILD, ...TYPECHECKS];

function run([label, args]) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code, signal) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const ok = code === 0;
      process.stdout.write(`${ok ? 'ok' : 'FAILED'}: ${label} (${seconds} s)\n${output}`);
      resolve(ok ? null : `${label} exited ${signal ?? code}`);
    });
  });
}

const queue = [...jobs];
const failures = [];
const lanes = Array.from({ length: Math.max(1, Math.min(2, availableParallelism())) }, async () => {
  for (let job = queue.shift(); job; job = queue.shift()) {
    const failure = await run(job);
    if (failure) failures.push(failure);
  }
});
await Promise.all(lanes);
if (failures.length > 0) {
  console.error(`checks failed: ${failures.join('; ')}`);
  process.exit(1);
}
