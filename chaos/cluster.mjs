// The chaos processes: workers and producers, each a real Nest app (dist/chaos/app/main.js) in a
// child process of its own, with its output in <runDir>/out/ and its execution log in
// <runDir>/exec/. A slot keeps its number across respawns; each incarnation has a new name, which
// is also its worker id and its PostgreSQL application_name.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class Cluster {
  /** @param {{ runDir: string, appMain: string, env: Record<string, string>, onExit: (member: object) => void }} deps */
  constructor(deps) {
    this.deps = deps;
    this.members = [];
    this.incarnations = new Map();
    mkdirSync(join(deps.runDir, 'out'), { recursive: true });
    mkdirSync(join(deps.runDir, 'exec'), { recursive: true });
  }

  spawn(role, slot, extraEnv = {}) {
    const key = `${role[0]}${slot}`;
    const incarnation = (this.incarnations.get(key) ?? 0) + 1;
    this.incarnations.set(key, incarnation);
    const name = `chaos-${key}.${incarnation}`;
    const logFile = join(this.deps.runDir, 'exec', `${name}.jsonl`);
    const out = openSync(join(this.deps.runDir, 'out', `${name}.log`), 'a');
    const child = spawn(process.execPath, [this.deps.appMain], {
      env: { ...process.env, ...this.deps.env, ...extraEnv, CHAOS_ROLE: role, CHAOS_NAME: name, CHAOS_LOG: logFile, NO_COLOR: '1' },
      stdio: ['ignore', out, out],
    });
    closeSync(out);
    const member = { role, slot, name, logFile, child, pid: child.pid, ready: false, expectedExit: false, paused: false, exitInfo: null };
    member.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        member.exitInfo = { code, signal };
        resolve(member.exitInfo);
        this.deps.onExit(member);
      }),
    );
    this.members.push(member);
    return member;
  }

  /** Members of a role that run (or are paused) and have not been told to exit. */
  live(role) {
    return this.members.filter((m) => m.role === role && m.exitInfo === null && !m.expectedExit);
  }

  /** Resolves true once the process logged `ready`, false if it exited first or the time ran out. */
  async waitReady(member, timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (member.exitInfo) return false;
      if (existsSync(member.logFile) && readFileSync(member.logFile, 'utf8').includes('"ev":"ready"')) {
        member.ready = true;
        return true;
      }
      await sleep(100);
    }
    return false;
  }

  kill9(member) {
    member.expectedExit = true;
    if (member.paused) this.resume(member);
    member.child.kill('SIGKILL');
  }

  pause(member) {
    member.paused = true;
    member.child.kill('SIGSTOP');
  }

  resume(member) {
    member.paused = false;
    member.child.kill('SIGCONT');
  }

  /** SIGTERM (a graceful shutdown), then SIGKILL after `graceMs`. */
  async terminate(member, graceMs = 15_000) {
    if (member.exitInfo) return member.exitInfo;
    member.expectedExit = true;
    if (member.paused) this.resume(member);
    member.child.kill('SIGTERM');
    const timer = setTimeout(() => member.child.kill('SIGKILL'), graceMs);
    const info = await member.exited;
    clearTimeout(timer);
    return info;
  }
}
