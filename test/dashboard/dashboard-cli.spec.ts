import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';
import { DashboardBrowser } from './dashboard-browser.js';

const CLI = join(process.cwd(), 'dist/lib/cli/main.js');
const children: ReturnType<typeof spawn>[] = [];

/** Starts `durable-scheduler dashboard`, resolving with its address once it says where it listens. */
function startCli(args: string[]) {
  const child = spawn(process.execPath, [CLI, 'dashboard', '--port', '0', ...args], { env: { ...process.env, DATABASE_URL: '' } });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /at (http:\/\/\S+) for /.exec(stdout);
      if (match) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`the dashboard exited with ${code}: ${stderr}`)));
  });
  return { child, url, exited, output: () => ({ stdout, stderr }) };
}

describe('durable-scheduler dashboard', () => {
  let dir: string;
  let dataSource: DataSource;
  let store: SqliteJobStore;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-dashboard-'));
    dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'ops.db') }).initialize();
    store = new SqliteJobStore({ dataSource });
    await store.migrate();
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the store it is pointed at, audits actions as dashboard:<user>, and stops on SIGTERM', async () => {
    const { id } = await store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
    const run = startCli(['--conn', `sqlite:${join(dir, 'ops.db')}`]);
    const url = await run.url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const browser = new DashboardBrowser(url);
    expect((await browser.get('/jobs')).text).toContain(`/jobs/${id}`);
    expect((await browser.post(`/jobs/${id}/cancel`)).status).toBe(303);
    expect((await store.jobGet({ jobId: id }))!.state).toBe('cancelled');
    expect((await store.auditList())[0]!.actor).toMatch(/^dashboard:.+@.+/);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('in read-only mode refuses actions', async () => {
    const { id } = await store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
    const run = startCli(['--conn', `sqlite:${join(dir, 'ops.db')}`, '--read-only']);
    const browser = new DashboardBrowser(await run.url);
    expect(run.output().stdout).toContain('read-only');
    expect((await browser.post(`/jobs/${id}/cancel`)).status).toBe(403);
    expect((await store.jobGet({ jobId: id }))!.state).toBe('scheduled');
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
  });

  it('refuses to bind a reachable interface without a token, in one sentence and before listening', async () => {
    const run = startCli(['--conn', `sqlite:${join(dir, 'ops.db')}`, '--host', '0.0.0.0']);
    await expect(run.url).rejects.toThrow(/needs a token: pass --token, or bind 127\.0\.0\.1\.\n$/);
    expect(await run.exited).not.toBe(0);
  });
});
