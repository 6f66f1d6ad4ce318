// `npm run bench` runs both benchmarks: the cost of effects, then the side-by-side peers bench.
// `npm run bench -- --quick` runs both small (under 10 minutes on 2 cores); `--only effects` or
// `--only peers` runs one; other arguments go to the peers bench (to the effects bench with
// `--only effects`). `--only growth` runs the growth bench alone, with the other arguments: it
// prefills 10 million jobs and takes about an hour, so the default run leaves it out. `--only
// dashboard` runs the dashboard bench alone (a million jobs, each page timed over HTTP; minutes).
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const at = args.indexOf('--only');
const only = at >= 0 && ['effects', 'peers', 'growth', 'dashboard'].includes(args[at + 1]) ? args.splice(at, 2)[1] : null;
const run = (file, fileArgs) => {
  const { status } = spawnSync(process.execPath, [new URL(file, import.meta.url).pathname, ...fileArgs], { stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
};
if (only === 'growth' || only === 'dashboard') {
  run(`./${only}.bench.mjs`, args);
} else {
  if (only !== 'peers') run('./effects.bench.mjs', only === 'effects' ? args : quick ? ['--jobs', '2000'] : []);
  if (only !== 'effects') run('./peers.bench.mjs', args);
}
