import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(process.cwd(), 'dist/lib/cli/main.js'), ...args], { env: { ...process.env, DATABASE_URL: '' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('durable-scheduler dead-letter replay-all', () => {
  let dir: string;
  let dataSource: DataSource;
  let store: SqliteJobStore;
  let conn: string[];
  const declined: string[] = [];
  const other: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-replay-all-'));
    dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'ops.db') }).initialize();
    store = new SqliteJobStore({ dataSource });
    await store.migrate();
    conn = ['--conn', `sqlite:${join(dir, 'ops.db')}`];
    for (const [name, error, into] of [
      ['billing.charge', 'Error: card declined\n    at charge (billing.ts:1:1)', declined],
      ['billing.charge', 'Error: card declined', declined],
      ['billing.charge', 'Error: timeout', other],
      ['mail.send', 'Error: card declined', other],
    ] as const) {
      const { id } = await store.jobEnqueue({ job: { name, payload: {} } });
      const [job] = await store.jobClaim({ workerId: 'seed', limit: 1, queues: ['default'], leaseMs: 60_000 });
      expect(job?.id).toBe(id);
      await store.jobCompleteMany({ workerId: 'seed', outcomes: [{ jobId: id, attempt: 1, kind: 'dead_lettered', error }] });
      into.push(id);
    }
  });
  afterAll(async () => {
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to run without a filter, in one sentence, and changes nothing', async () => {
    const run = await cli(['dead-letter', 'replay-all', ...conn]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toBe('dead-letter replay-all needs a filter: pass --name, --error or both, or replay one job with dead-letter replay <id>.\n');
    expect((await store.jobListDeadLettered()).length).toBe(4);
    expect((await cli(['dead-letter', 'replay-all', ...conn, '--error', ''])).stderr).toContain('needs a filter');
    expect((await store.jobListDeadLettered()).length).toBe(4);
  });

  it('--dry-run lists the matches by name and error line and replays nothing', async () => {
    const run = await cli(['dead-letter', 'replay-all', ...conn, '--name', 'billing.charge', '--error', 'card declined', '--dry-run']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    for (const id of declined) expect(run.stdout).toContain(id);
    for (const id of other) expect(run.stdout).not.toContain(id);
    expect(run.stdout).toContain('2 would be replayed; run again without --dry-run to replay them.');
    expect((await store.jobListDeadLettered()).length).toBe(4);
  });

  it('replays exactly the matches, each audited as the CLI user', async () => {
    const run = await cli(['dead-letter', 'replay-all', ...conn, '--name', 'billing.charge', '--error', 'card declined']);
    expect(run).toMatchObject({ code: 0, stderr: '', stdout: 'Replayed 2 of 2 matching dead letters: attempt 0, due now.\n' });
    for (const id of declined) expect((await store.jobGet({ jobId: id }))!.state).toBe('scheduled');
    for (const id of other) expect((await store.jobGet({ jobId: id }))!.state).toBe('dead_lettered');
    const audit = (await store.auditList()).filter((record) => record.action === 'job.replay');
    expect(audit.map((record) => record.target).sort()).toEqual([...declined].sort());
    expect(audit.every((record) => /^cli:.+@.+$/.test(record.actor))).toBe(true);
    expect((await cli(['dead-letter', 'replay-all', ...conn, '--name', 'billing.charge', '--error', 'card declined'])).stdout).toBe('No dead letter among the 1000 most recent matches.\n');
  });
});
