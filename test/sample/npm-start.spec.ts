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

/** A process as the kernel names it: its pid and its start time, so a reused pid is not taken for it. */
interface Proc {
  pid: number;
  start: string;
}

function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function identify(pid: number): Proc | null {
  const fields = statFields(pid);
  return fields === null ? null : { pid, start: fields[19]! };
}

/** True while `proc` itself runs: not gone, not a zombie awaiting its reaper, not a newer process with its pid. */
function running(proc: Proc): boolean {
  const fields = statFields(proc.pid);
  return fields !== null && fields[0] !== 'Z' && fields[19] === proc.start;
}

function snapshot(pid: number): Proc[] {
  return descendants(pid).flatMap((child) => identify(child) ?? []);
}

/** Waits until none of `procs` runs, for at most `ms` of wall time, and returns the survivors with their command lines. */
async function survivors(procs: Proc[], ms: number): Promise<string[]> {
  const until = Date.now() + ms;
  while (procs.some(running) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  return procs.filter(running).map((proc) => {
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      // gone between the two reads
    }
    return `${proc.pid} ${cmdline}`.trim();
  });
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
    let spawned: Proc[] = [];
    try {
      await ready;
      spawned = snapshot(npm.pid!);
      expect(spawned.length).toBeGreaterThan(0);
      npm.kill('SIGTERM');
      await exited;
      expect(log).toMatch(/worker \S+ stopped\./);
      expect(await survivors(spawned, 10_000)).toEqual([]);
    } finally {
      for (const proc of spawned.filter(running)) process.kill(proc.pid, 'SIGKILL');
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
  while (identify(pid) !== null && statFields(pid)![0] !== 'Z') {
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

  /** Starts a million-seed batch under npm and resolves once the simulator itself runs. */
  async function longBatch(): Promise<{ npm: ReturnType<typeof spawn>; exited: Promise<void>; sim: Proc; log: () => string }> {
    // --ignore-scripts skips presim (the build, which would rewrite dist/ under other test files).
    const npm = spawn('npm', ['run', 'sim', '--ignore-scripts', '--silent', '--', '--seeds', '1000000'], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    npm.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    npm.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const exited = new Promise<void>((resolve) => npm.on('exit', () => resolve()));
    const pid = await descendantRunning(npm.pid!, 'sim.main.js', () => log);
    // The batch's first line comes after it has noted its parent and while it runs in the process named.
    while (!/running 1000000 seeds/.test(log)) {
      if (npm.exitCode !== null || npm.signalCode !== null) throw new Error(`npm run sim ended before its batch started:\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { npm, exited, sim: identify(pid)!, log: () => log };
  }

  it('issue 19: SIGTERM to the npm process of a long simulator batch leaves no process behind', async () => {
    const { npm, exited, sim } = await longBatch();
    try {
      npm.kill('SIGTERM');
      await exited;
      // npm forwards the signal and exits once the simulator has; the bound only names a survivor.
      expect(await survivors([sim], 30_000)).toEqual([]);
    } finally {
      if (running(sim)) process.kill(sim.pid, 'SIGKILL');
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
    }
  });

  it('issue 35: a simulator batch whose npm is killed outright stops by itself after its current seed', async () => {
    const { npm, exited, sim } = await longBatch();
    try {
      // SIGKILL cannot be forwarded: the simulator is orphaned and must notice.
      npm.kill('SIGKILL');
      await exited;
      expect(await survivors([sim], 60_000)).toEqual([]);
    } finally {
      if (running(sim)) process.kill(sim.pid, 'SIGKILL');
    }
  }, 90_000);
});
