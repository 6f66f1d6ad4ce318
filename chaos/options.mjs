// Command-line options of the chaos run. Every setting a run derives is printed with the seed,
// so a run can be repeated from its first line.
import { randomInt } from 'node:crypto';

const USAGE = `usage: npm run chaos -- [--store postgres|mariadb] [--duration SECONDS] [--seed N] [--workers N] [--producers N] [--result FILE]
  --store      the database: postgres (default: embedded, or DATABASE_URL) or mariadb (a private
               server of the machine's mariadbd, or MARIADB_URL; docs/reliability.md)
  --duration   seconds of fault injection (default 150; the whole run takes about a minute more)
  --seed       seeds the workload and the fault plan (default: random, printed)
  --workers    worker processes (default 3)
  --producers  producer processes (default 2)
  --lease-ms   the workers' lease (default 2500)
  --rate       transactions per second per producer (default 3)
  --result     also write the verdict as JSON to FILE (used by .ci/run)
  --keep       keep the logs (and, with DATABASE_URL or MARIADB_URL, the schemas) of a run that passed`;

const STORES = ['postgres', 'mariadb'];

export function parseOptions(argv) {
  const options = { store: 'postgres', duration: 150, seed: randomInt(1, 2 ** 31), workers: 3, producers: 2, leaseMs: 2_500, rate: 3, result: null, keep: false };
  const numeric = { '--duration': 'duration', '--seed': 'seed', '--workers': 'workers', '--producers': 'producers', '--lease-ms': 'leaseMs', '--rate': 'rate' };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    if (flag === '--keep') {
      options.keep = true;
      continue;
    }
    const value = argv[i + 1];
    i += 1;
    if (flag === '--result' && value) options.result = value;
    else if (flag === '--store' && STORES.includes(value)) options.store = value;
    else if (numeric[flag] && value !== undefined && Number.isFinite(Number(value)) && Number(value) > 0) options[numeric[flag]] = Number(value);
    else {
      console.error(`chaos: bad option ${flag} ${value ?? ''}\n${USAGE}`);
      process.exit(2);
    }
  }
  return options;
}
