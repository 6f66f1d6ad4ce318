import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * A real second process on a SQLite file (test/support/sqlite-neighbour-process.mjs) that takes and
 * releases the file's write lock on command. Every method resolves on the child's answer, so a
 * test knows the lock is held (or free) before it goes on: no sleeps.
 */
export class SqliteNeighbour {
  private readonly answers: string[] = [];
  private readonly waiting: { resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  private stderr = '';

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const waiter = this.waiting.shift();
      if (waiter) waiter.resolve(line);
      else this.answers.push(line);
    });
    child.stderr.on('data', (chunk) => (this.stderr += String(chunk)));
    child.on('exit', (code) => {
      for (const waiter of this.waiting.splice(0)) waiter.reject(new Error(`the neighbour process exited ${code}: ${this.stderr}`));
    });
  }

  static async start(database: string): Promise<SqliteNeighbour> {
    const child = spawn(process.execPath, [join(process.cwd(), 'test/support/sqlite-neighbour-process.mjs'), database], { stdio: 'pipe' });
    const neighbour = new SqliteNeighbour(child);
    await neighbour.expect('ready');
    return neighbour;
  }

  /** The child's next answer line. */
  next(): Promise<string> {
    const line = this.answers.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.child.exitCode !== null) return Promise.reject(new Error(`the neighbour process exited ${this.child.exitCode}: ${this.stderr}`));
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  send(command: 'lock' | 'release' | 'write' | 'exit'): void {
    this.child.stdin.write(`${command}\n`);
  }

  /** Takes the write lock (BEGIN IMMEDIATE plus one write) and keeps it. */
  async lock(): Promise<void> {
    this.send('lock');
    await this.expect('locked');
  }

  /** Commits the held transaction, freeing the lock. */
  async release(): Promise<void> {
    this.send('release');
    await this.expect('released');
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.send('exit');
    this.child.stdin.end();
    await exited;
  }

  private async expect(answer: string): Promise<void> {
    const line = await this.next();
    if (line !== answer) throw new Error(`the neighbour answered "${line}", expected "${answer}"`);
  }
}
