import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './sample-process.js';

/** Every live descendant of `pid`, read from /proc (the kernel's own parent links). */
function descendants(pid: number): number[] {
  const found: number[] = [];
  const visit = (parent: number) => {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean).map(Number)) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('issue 19 item 16: npm start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-npm-start-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('issue 19 item 16: builds in prestart and runs node in place of the shell', () => {
    const { scripts } = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.prestart).toBe('npm run build');
    expect(scripts.start).toMatch(/^exec node /);
  });

  it('issue 19 item 16: SIGTERM to the npm process drains the sample and leaves no process behind', async () => {
    const port = await freePort();
    // --ignore-scripts skips prestart (the build, which would rewrite dist/ under other test files) and runs start itself.
    const npm = spawn('npm', ['start', '--ignore-scripts', '--silent'], {
      cwd: process.cwd(),
      env: { ...process.env, PORT: String(port), SAMPLE_SQLITE_FILE: join(dir, 'sample.db'), DATABASE_URL: '', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    const ready = new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        log += chunk.toString();
        if (/curl -s -X POST \S+\/reports/.test(log)) resolve();
      };
      npm.stdout!.on('data', onData);
      npm.stderr!.on('data', onData);
      npm.once('exit', (code) => reject(new Error(`npm start exited with code ${code} before the sample listened:\n${log}`)));
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.on('exit', (code, signal) => resolve({ code, signal })));
    let spawned: number[] = [];
    try {
      await ready;
      spawned = descendants(npm.pid!);
      expect(spawned.length).toBeGreaterThan(0);
      npm.kill('SIGTERM');
      await exited;
      expect(log).toMatch(/worker \S+ stopped\./);
      expect(spawned.filter(alive)).toEqual([]);
    } finally {
      for (const pid of spawned.filter(alive)) process.kill(pid, 'SIGKILL');
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
    }
  });
});

/**
 * Waits, reading /proc, until a descendant of `pid` runs a command line containing `needle`, or
 * fails as soon as `pid` has exited without one. It used to give up after 1,000 tries of 20 ms, a
 * bound in wall time that a loaded machine's npm start-up eats into; whether the process appears
 * does not depend on that. Jest's timeout catches a hang.
 */
async function descendantRunning(pid: number, needle: string, give: () => string): Promise<number> {
  while (alive(pid)) {
    for (const child of descendants(pid)) {
      let cmdline = '';
      try {
        cmdline = readFileSync(`/proc/${child}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      if (cmdline.includes(needle)) return child;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no process running ${needle} appeared:\n${give()}`);
}

describe('issue 19: npm run sim, bench and chaos', () => {
  it.each(['sim', 'bench', 'chaos'])('issue 19: %s builds in its pre script and runs node in place of the shell', (name) => {
    const { scripts } = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts[`pre${name}`]).toBe('npm run build');
    expect(scripts[name]).toMatch(/^exec node \S+$/);
  });

  it('issue 19: SIGTERM to the npm process of a long simulator batch leaves no process behind', async () => {
    // --ignore-scripts skips presim (the build, which would rewrite dist/ under other test files).
    const npm = spawn('npm', ['run', 'sim', '--ignore-scripts', '--silent', '--', '--seeds', '1000000'], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    npm.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    npm.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const exited = new Promise<void>((resolve) => npm.on('exit', () => resolve()));
    let spawned: number[] = [];
    try {
      await descendantRunning(npm.pid!, 'sim.main.js', () => log);
      spawned = descendants(npm.pid!);
      npm.kill('SIGTERM');
      await exited;
      for (const pid of spawned) {
        // npm forwards the signal; the simulator may still be exiting when npm has.
        for (let tries = 0; alive(pid) && tries < 500; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(spawned.filter(alive)).toEqual([]);
    } finally {
      for (const pid of spawned.filter(alive)) process.kill(pid, 'SIGKILL');
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
    }
  });
});
