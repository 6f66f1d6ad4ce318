import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The built sample app (`dist/sample/main.js`) in a child process, with its log as a stream of lines. */
export class SampleProcess {
  private output = '';
  private readonly waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    private readonly child: ChildProcess,
    readonly base: string,
  ) {
    const onData = (chunk: Buffer) => {
      this.output += chunk.toString();
      for (const waiter of [...this.waiters]) {
        const line = this.output.split('\n').find((l) => waiter.pattern.test(l));
        if (line !== undefined) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  static async start(env: Record<string, string>): Promise<SampleProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, [join(process.cwd(), 'dist/sample/main.js')], {
      env: { ...process.env, ...env, PORT: String(port), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const sample = new SampleProcess(child, `http://127.0.0.1:${port}`);
    await Promise.race([
      // The last line the sample prints at startup.
      sample.logLine(/curl -s -X POST \S+\/reports/),
      sample.exited.then(({ code }) => {
        throw new Error(`the sample exited with code ${code} before listening:\n${sample.log}`);
      }),
    ]);
    return sample;
  }

  get log(): string {
    return this.output;
  }

  /** Resolves with the first log line (past or future) that matches. */
  logLine(pattern: RegExp): Promise<string> {
    const line = this.output.split('\n').find((l) => pattern.test(l));
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve) => this.waiters.push({ pattern, resolve }));
  }

  async request(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
    const response = await fetch(this.base + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, json: await response.json() };
  }

  /**
   * Waits until GET /jobs/:id reports `state`. A handler logs before its outcome commits, so a log
   * line alone does not mean the job has settled; this asks the app, every 20 ms, for up to 15 s.
   */
  async jobSettled(jobId: string, state: string): Promise<any> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { json } = await this.request('GET', `/jobs/${jobId}`);
      if (json.state === state) return json;
      if (Date.now() > deadline) {
        // The job as the app reads it and the app's last lines: enough to say why it has not moved.
        throw new Error(`job ${jobId} is ${json.state}, not ${state}, after 15 s: ${JSON.stringify(json)}\n${this.output.split('\n').slice(-40).join('\n')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}
