import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';
import { readVerifyRuns } from '../../lib/verify/index.js';
import { runCliHere as cli } from '../support/cli-run.js';

/** `durable-scheduler verify` on a SQLite file: clean after real work, exit 3 and the rule named after a sabotaged entry. */
describe('durable-scheduler verify', () => {
  let dir: string;
  let dataSource: DataSource;
  let store: SqliteJobStore;
  let conn: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-verify-cli-'));
    const database = join(dir, 'ops.db');
    dataSource = await new DataSource({ type: 'better-sqlite3', database }).initialize();
    store = new SqliteJobStore({ dataSource });
    await store.migrate();
    conn = ['--conn', `sqlite:${database}`];
  });
  afterAll(async () => {
    await store.close();
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('issue 40: says what it checked and that no promise was broken, then names a broken one and exits 3', async () => {
    for (let i = 0; i < 3; i++) await store.jobEnqueue({ job: { name: 'work', payload: i } });
    for (const job of await store.jobClaim({ workerId: 'w', limit: 2, queues: ['default'], leaseMs: 60_000 })) {
      await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded' }] });
    }
    const clean = await cli(['verify', ...conn]);
    expect(clean).toMatchObject({ code: 0, stderr: '' });
    const lines = clean.stdout.split('\n');
    expect(lines[0]).toBe('Checked 7 entries of 3 jobs in the whole history (4 changes of state, 2 attempts, 2 ends of a lease, 0 releases of a dependant, 0 starts under a concurrency limit, 0 under a rate, 0 unique keys taken, 0 occurrences minted), and compared 3 stored jobs with the last entry of their history.');
    expect(lines[1]).toBe('No promise was broken.');
    expect(clean.stdout).toContain('Not checked:\n- A job that held a unique key or an occurrence and was deleted since');
    expect(clean.stdout).not.toMatch(/lease deadline/);

    // A second success of a finished attempt, written by hand as a broken store would.
    const [done] = (await store.jobList({ state: 'succeeded', limit: 1 })).map((job) => job.id);
    const { history, jobs } = store.naming;
    await dataSource.query(`INSERT INTO ${history} (job_id, name, at, state, attempt) SELECT id, name, ?, 'succeeded', 1 FROM ${jobs} WHERE id = ?`, [Date.now(), done]);
    const broken = await cli(['verify', ...conn]);
    expect(broken.code).toBe(3);
    expect(broken.stderr).toBe('verify found 1 broken promise in the history.\n');
    expect(broken.stdout).toContain('1 broken promise:\nRULE');
    expect(broken.stdout).toMatch(new RegExp(`\\ntwo_outcomes\\s+${done}\\s+\\d+,\\d+\\s+Attempt 1 of job ${done} had an outcome already`));

    const asJson = await cli(['verify', ...conn, '--format', 'json']);
    expect(asJson.code).toBe(3);
    const report = JSON.parse(asJson.stdout) as { violationCount: number; violations: { rule: string; jobId: string }[]; checked: { entries: number } };
    expect(report.violationCount).toBe(1);
    expect(report.violations.map((v) => [v.rule, v.jobId])).toEqual([['two_outcomes', done]]);
    expect(report.checked.entries).toBe(8);

    // A range that ends before the broken entry checks only what came before it.
    const until = await cli(['verify', ...conn, '--until', new Date(Date.now() - 60_000).toISOString()]);
    expect(until.code).toBe(0);
    expect(until.stdout).toMatch(/^Checked 0 entries of 0 jobs in the history before \d{4}-\d\d-\d\dT[\d:.]+Z \(0 changes of state, 0 attempts, 0 ends of a lease, 0 releases of a dependant, 0 starts under a concurrency limit, 0 under a rate, 0 unique keys taken, 0 occurrences minted\)\.\nNothing was checked: the range holds no history entry\./);
  });

  it('issue 40: a bad range is a usage error in one sentence', async () => {
    const bad = await cli(['verify', ...conn, '--since', 'yesterday']);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toMatch(/--since must be an ISO 8601 instant such as 2026-12-06T01:00:00Z, got "yesterday"\./);
    const backwards = await cli(['verify', ...conn, '--since', '2026-12-06T00:00:00Z', '--until', '2026-12-05T00:00:00Z']);
    expect(backwards).toMatchObject({ code: 2, stdout: '' });
    expect(backwards.stderr).toBe('--until must come after --since.\n');
  });

  it('issue 40: files each report in the audit log under the CLI actor, unless --no-record; tables older than schema 26 are refused', async () => {
    const before = (await readVerifyRuns(store, 100)).length;
    const recorded = await cli(['verify', ...conn, '--since', '2026-12-06T00:00:00Z']);
    const runs = await readVerifyRuns(store, 100);
    expect(runs).toHaveLength(before + 1);
    // The first case left its broken entry behind: the run found it, and its record says so.
    expect(recorded.code).toBe(3);
    expect(runs[0]).toMatchObject({ actor: expect.stringMatching(/^cli:/), since: new Date('2026-12-06T00:00:00Z'), until: null, violationCount: 1 });
    expect(runs[0]!.violations.map((v) => v.rule)).toEqual(['two_outcomes']);
    expect((await cli(['verify', ...conn, '--no-record'])).code).toBe(3);
    expect(await readVerifyRuns(store, 100)).toHaveLength(before + 1);

    // A store that refuses the audit write (a user that may only read): the report and its exit code stand.
    await dataSource.query(`CREATE TRIGGER refuse_audit BEFORE INSERT ON ${store.naming.audit} BEGIN SELECT RAISE(ABORT, 'attempt to write a readonly database'); END`);
    const unfiled = await cli(['verify', ...conn]);
    await dataSource.query('DROP TRIGGER refuse_audit');
    expect(unfiled.code).toBe(3);
    expect(unfiled.stdout).toContain('1 broken promise:\nRULE');
    expect(unfiled.stdout).toMatch(/\nThe report was not filed in the audit log \([^\n]*attempt to write a readonly database[^\n]*\); --no-record skips filing\.\n$/);
    expect(await readVerifyRuns(store, 100)).toHaveLength(before + 1);

    const old = join(dir, 'old.db');
    const oldSource = await new DataSource({ type: 'better-sqlite3', database: old }).initialize();
    const oldStore = new SqliteJobStore({ dataSource: oldSource });
    await oldStore.migrate();
    await oldSource.query(`DELETE FROM ${oldStore.naming.migrations} WHERE version >= 26`);
    await oldStore.close();
    await oldSource.destroy();
    const refused = await cli(['verify', '--conn', `sqlite:${old}`]);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(/are at schema version 25, and verify needs 26; run "durable-scheduler migrate" first\.\n$/);
  });
});
