import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { IncompatibleSchemaError } from '../../lib/core/index.js';
import { installStep, type SqlInstall } from '../../lib/store/sql-install.js';
import { POSTGRES_INSTALL_COMPATIBLE_FROM, POSTGRES_INSTALL_VERSION, postgresInstall } from '../../lib/store/postgres/postgres-install.js';
import { postgresNaming } from '../../lib/store/postgres/postgres-naming.js';
import { SQLITE_INSTALL_COMPATIBLE_FROM, SQLITE_INSTALL_VERSION, sqliteInstall } from '../../lib/store/sqlite/sqlite-install.js';
import { sqliteNaming } from '../../lib/store/sqlite/sqlite-naming.js';

const POLICIES = ['off', 'transitions', 'transitions_and_errors'] as const;

/**
 * The fingerprint of each install version's SQL, under every history policy. When the installed SQL
 * changes, the version must go up (an older node compares versions, not SQL): add the new version
 * here with its fingerprint, and never edit an earlier line.
 */
const POSTGRES_FINGERPRINTS: Record<number, string> = {
  1: 'a90c93a9f1c74e23',
  // Lanes of held-back jobs (migration 0018): claim_pick, limits_gate reads parked jobs, log entries on the statement's clock.
  2: '817b1265e68ca824',
  // The lean finish (migration 0019): the effects trigger deletes the successes an outcome write under `lean` marks.
  3: '6755dcf0bc461bbb',
  // Snoozes (migration 0020): the jobs table gains `snoozes`; the installed SQL is unchanged.
  4: '6755dcf0bc461bbb',
  // Debounce and throttle windows (migration 0021): the lean finish keeps the opener of a throttle window.
  5: '02900111fb117918',
  // The settle function locks the dependants it cancels and those another settler may write, in id order before writing any,
  // and dates what it writes at its statement's time, never before the dependant's creation.
  6: 'f42a105ad9e97344',
  // Sequences (migration 0022): a sequence edge stays open while its parent's failure blocks it or the parent is in line,
  // releases rather than cancels, a discarded dead letter settles; the lean finish keeps sequence jobs.
  7: 'ff65031f446ce8e0',
  // Batches (migration 0023): an on_failure dependant lowers its latch however a parent ended, remembers a parent that did
  // not succeed, and is cancelled, as a cascade cancels, when its last parent ends with every parent succeeded; a
  // frontier's parents are read by key, and a write settles three more edges per job it ended.
  8: 'c46ea20c30957cea',
  // Fair groups (migration 0024): the jobs table gains `group_key`, and a due grouped job waits in a lane; limits_exist gates the
  // lane claim, which reads lanes with no limit to count.
  9: 'f5c1f0f63cc5010a',
  // The lease in the history (migration 0026): an entry into or out of running names the worker, and one out of it the lease deadline.
  10: 'cf6161997d558426',
  // A heartbeat renews a capped job's slots before its lease, and not the lease of a job whose slot it could not renew
  // (renew_held); renew_slots stays for the heartbeats of earlier versions.
  11: '30700deaa337409e',
};
const SQLITE_FINGERPRINTS: Record<number, string> = {
  1: '5e1b42476d6e1bdb',
  // Migration 0018 (lanes of held-back jobs); the installed SQL is unchanged.
  2: '5e1b42476d6e1bdb',
  // Migration 0019 (observer filters, the node's finish mode); the installed SQL is unchanged.
  3: '5e1b42476d6e1bdb',
  // Migration 0020 (snoozes); the installed SQL is unchanged.
  4: '5e1b42476d6e1bdb',
  // Migration 0021 (debounce and throttle windows); the installed SQL is unchanged.
  5: '5e1b42476d6e1bdb',
  // Sequences (migration 0022): the settle trigger follows the sequence rules, through a second work table.
  6: '1758c51343a4bffe',
  // Batches (migration 0023): the settle trigger and sweep read an on_failure dependant's fails_only, remember a parent that
  // did not succeed, and cancel it, settling its own edges in the same pass, when its last parent ends with every parent
  // succeeded; the work table is made anew with a `failed` column; edges are marked settled by their parent's index.
  7: '6231a97bb0652017',
  // Fair groups (migration 0024): the jobs table gains `group_key`; the installed SQL is unchanged.
  8: '6231a97bb0652017',
  // The lease in the history (migration 0026): an entry into or out of running names the worker and, out of it, the lease
  // deadline; every entry is stamped with the time its statement wrote to the job, on the store's clock (its fence's), and
  // the settle trigger dates what it writes by the write of the parent that ended.
  9: '8b4db12243247930',
};

function fingerprint(render: (policy: (typeof POLICIES)[number]) => string): string {
  const hash = createHash('sha256');
  for (const policy of POLICIES) hash.update(render(policy));
  return hash.digest('hex').slice(0, 16);
}

const install = (version: number, compatibleFrom = 1): SqlInstall => ({ version, compatibleFrom, sql: '' });

describe('issue 35 item 3: install versions', () => {
  it('issue 35 item 3: the installed SQL of each store matches the fingerprint pinned for its install version', () => {
    expect(fingerprint((policy) => postgresInstall(postgresNaming(), policy).sql)).toBe(POSTGRES_FINGERPRINTS[POSTGRES_INSTALL_VERSION]);
    expect(fingerprint((policy) => sqliteInstall(sqliteNaming(), policy).sql)).toBe(SQLITE_FINGERPRINTS[SQLITE_INSTALL_VERSION]);
    expect(POSTGRES_INSTALL_COMPATIBLE_FROM).toBeLessThanOrEqual(POSTGRES_INSTALL_VERSION);
    expect(SQLITE_INSTALL_COMPATIBLE_FROM).toBeLessThanOrEqual(SQLITE_INSTALL_VERSION);
  });

  it('issue 35 item 3: a node upgrades a database with no install, an older one or its own, and keeps a newer one it may run against', () => {
    expect(installStep(undefined, install(3), [1, 2], 'here')).toBe('upgrade');
    expect(installStep({ version: 2, compatibleFrom: 1 }, install(3), [7], 'here')).toBe('upgrade');
    expect(installStep({ version: 3, compatibleFrom: 3 }, install(3), [], 'here')).toBe('upgrade');
    expect(installStep({ version: 4, compatibleFrom: 2 }, install(3, 2), [], 'here')).toBe('keep');
    expect(installStep({ version: 4, compatibleFrom: 3 }, install(3, 2), [], 'here')).toBe('keep');
  });

  it('issue 35 item 3: a node refuses, in one sentence, a newer install that rules its version out or lacks one of its migrations', () => {
    const refusal = (run: () => unknown) => {
      let error: unknown;
      try {
        run();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(IncompatibleSchemaError);
      expect((error as IncompatibleSchemaError).code).toBe('INCOMPATIBLE_SCHEMA');
      expect((error as Error).message).toMatch(/^[^\n]+\.$/);
      return error as IncompatibleSchemaError;
    };
    const ruledOut = refusal(() => installStep({ version: 5, compatibleFrom: 4 }, install(3), [], 'schema app'));
    expect(ruledOut.message).toBe(
      'The scheduler tables at schema app were installed by a newer version of nestjs-durable-scheduler (install version 5), which runs only with install version 4 or later, and this node has 3; upgrade this node.',
    );
    expect([ruledOut.nodeVersion, ruledOut.databaseVersion]).toEqual([3, 5]);
    expect(refusal(() => installStep({ version: 5, compatibleFrom: 1 }, install(3), [18], 'schema app')).message).toMatch(/lacks migration 18 of this node's install version 3/);
  });
});
