import { afterAll, beforeAll, describe } from '@jest/globals';
import { runConformanceSuite } from '../../lib/store-kit/conformance/index.js';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { databaseUrl } from '../support/postgres.js';
import { postgresTarget } from '../support/targets/postgres.target.js';

// Issue 37 item 3: the whole store contract through a real PgBouncer in transaction mode, where no
// session state outlives a transaction: statements unprepared, wake-ups from polling alone.

let bouncer: PgBouncer;
beforeAll(async () => {
  bouncer = await startPgBouncer(databaseUrl());
});
afterAll(async () => {
  await bouncer.stop();
});

describe('JobStore conformance: postgres through PgBouncer, transaction mode', () =>
  runConformanceSuite(() => postgresTarget({ url: bouncer.url, name: 'postgres-pgbouncer', store: { poolMode: 'transaction' } })));
