import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { freePort } from '../sample/sample-process.js';
import { listening } from '../support/listening.js';
import { APP_DEPENDENCIES, linkDependencies, tsc } from '../support/packed-app.js';

/** The page whose blocks this test runs. */
const DOC = 'docs/observability.md';

interface RecordedSpan {
  name: string;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  startUs: number;
  attributes: Record<string, unknown>;
}

/** A page's section: from its `## ` heading to the next one. Throws when the heading is gone. */
function section(page: string, heading: string): string {
  const text = readFileSync(join(process.cwd(), page), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${page} has no section "${heading}"`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/**
 * `text` with `target` replaced. Throws unless `target` occurs exactly once, so a docs change that
 * removes or repeats it stops this test instead of silently running something else.
 */
function replaceOnce(text: string, target: string, replacement: string, where: string): string {
  const count = text.split(target).length - 1;
  if (count !== 1) throw new Error(`${where} contains \`${target}\` ${count} times, not once: update the swap in ${import.meta.url}`);
  return text.replace(target, () => replacement);
}

/**
 * The docs' instrumentation.ts: the SDK block (`// instrumentation.ts ...`) followed by each block
 * the section says to add to it (`// Add to instrumentation.ts ...`), in the page's order; the
 * packages they import; the packages and versions the section's `npm install` lines name; and the
 * trace it draws.
 */
function documentedInstrumentation() {
  const text = section(DOC, '## Traces that cross the database');
  const blocks = [...text.matchAll(/```ts\n(\/\/ (Add to )?instrumentation\.ts[^\n]*)\n([\s\S]*?)```/g)].map((m) => ({ header: m[1]!, adds: m[2] !== undefined, code: m[3]! }));
  const sdk = blocks.filter((b) => !b.adds);
  if (sdk.length !== 1) throw new Error(`${DOC} has ${sdk.length} blocks beginning "// instrumentation.ts", not one`);
  const installs = new Map(
    [...text.matchAll(/```bash\n([\s\S]*?)```/g)]
      .flatMap((m) => [...m[1]!.replace(/\\\n/g, ' ').matchAll(/npm install ([^\n]+)/g)])
      .flatMap((m) => m[1]!.trim().split(/\s+/))
      .map((word) => /^(@?[^@\s]+)@(\S+)$/.exec(word))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );
  // The packages the blocks import (and the one whose loader hook they register).
  const imported = [
    ...new Set(
      blocks
        .flatMap((b) => [...b.code.matchAll(/from '([^'.][^']*)'|register\('([^'.][^']*)'/g)])
        .map((m) => m[1] ?? m[2]!)
        .filter((specifier) => !specifier.startsWith('node:'))
        .map((specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')),
    ),
  ];
  // The trace the page draws after the blocks: `name   scope` lines, indented two spaces a level.
  const after = text.slice(text.lastIndexOf('```ts\n// Add to instrumentation.ts'));
  const drawn = /gives this trace[\s\S]*?```\n([\s\S]*?)```/.exec(after)?.[1];
  return { sdk: sdk[0]!, additions: blocks.filter((b) => b.adds), imported, installs, drawn };
}

/**
 * The README's Quick start: its files (`// main.ts` ...) and the options its `npx tsc --init` line
 * passes (test/docs/quick-start.spec.ts follows the rest of it: packing, CommonJS, PostgreSQL).
 */
function quickStart() {
  const text = section('README.md', '## Quick start with NestJS');
  const files = [...text.matchAll(/```ts\n\/\/ ([\w.-]+\.ts)\n([\s\S]*?)```/g)].map((m) => ({ file: m[1]!, code: m[2]! }));
  const initArgs = /npx tsc --init([^&\n]*)/.exec(text)![1]!.trim().split(/\s+/).filter(Boolean);
  return { files, initArgs };
}

/**
 * What the test puts in place of the docs' `ConsoleSpanExporter`: each span as one JSON line on
 * file descriptor 3, a pipe the test reads. Compiled with the app, under the Quick start's tsconfig.
 */
const SPAN_CHANNEL = `import { writeSync } from 'node:fs';
import { ExportResultCode, hrTimeToMicroseconds, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

export class SpanChannelExporter implements SpanExporter {
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const lines = spans.map((span) =>
      JSON.stringify({
        name: span.name,
        scope: span.instrumentationScope.name,
        traceId: span.spanContext().traceId,
        spanId: span.spanContext().spanId,
        parentSpanId: span.parentSpanContext?.spanId,
        startUs: hrTimeToMicroseconds(span.startTime),
        attributes: span.attributes,
      }),
    );
    writeSync(3, lines.map((line) => line + '\\n').join(''));
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}
`;

/** `span` and its ancestors among `spans`, the span first, up to the root (or the first one not recorded). */
function ancestry(span: RecordedSpan, spans: RecordedSpan[]): RecordedSpan[] {
  const chain = [span];
  for (let parent = span.parentSpanId; parent !== undefined; ) {
    const next = spans.find((s) => s.spanId === parent);
    if (!next) break;
    chain.push(next);
    parent = next.parentSpanId;
  }
  return chain;
}

/**
 * docs/observability.md's "Traces that cross the database" says the Quick start's `POST /orders`
 * becomes the parent of the scheduler's `send` span once the instrumentation it names is added to
 * instrumentation.ts. Run as written: the README's Quick start files, main.ts importing the docs'
 * instrumentation.ts first (as its header says), compiled by the Quick start's `tsc --init` options
 * and run with `node dist/main.js` on SQLite, against the versions installed as the page's
 * `npm install` lines say. A child process, since the loader hook must be registered before Express
 * is imported, which jest's vm modules cannot do.
 */
describe('docs/observability.md: HTTP and Express instrumentation', () => {
  const root = process.cwd();
  let dir = '';
  const docs = documentedInstrumentation();

  beforeAll(async () => {
    if (!existsSync(join(root, 'dist/lib/index.js'))) throw new Error('dist/ is missing; run npm run build before this test.');
    dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-otelhttp-'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'module' }));
    // The package as built (no pack: quick-start.spec.ts tests the tarball), and what the app installs.
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(root, join(dir, 'node_modules', 'nestjs-durable-scheduler'), 'dir');
    linkDependencies(dir, [...APP_DEPENDENCIES, ...docs.imported]);

    const { files, initArgs } = quickStart();
    await tsc(dir, '--init', ...initArgs);
    mkdirSync(join(dir, 'src'));
    // The docs' header says main.ts imports instrumentation.ts first, before the app module.
    expect(docs.sdk.header).toContain('imported first by main.ts');
    for (const { file, code } of files) writeFileSync(join(dir, 'src', file), file === 'main.ts' ? `import './instrumentation.js';\n${code}` : code);
    // The one swap in the docs' code: the console exporter becomes the span channel. Its
    // BatchSpanProcessor stays; OTEL_BSP_SCHEDULE_DELAY below shortens its 5 s batching delay.
    const sdk = replaceOnce(docs.sdk.code, 'new ConsoleSpanExporter()', 'new SpanChannelExporter()', `${DOC}'s instrumentation.ts block`);
    const instrumentation = [`import { SpanChannelExporter } from './span-channel.js';`, sdk, ...docs.additions.map((b) => b.code)].join('\n');
    writeFileSync(join(dir, 'src', 'instrumentation.ts'), instrumentation);
    writeFileSync(join(dir, 'src', 'span-channel.ts'), SPAN_CHANNEL);
    await tsc(dir, '-p', '.');
  }, 60_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('issue 35 item 19: the documented HTTP and Express instrumentation make the request span the parent of send', async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), NO_COLOR: '1', OTEL_BSP_SCHEDULE_DELAY: '10' };
    for (const key of ['DATABASE_URL', 'NODE_OPTIONS']) delete env[key];
    const child = spawn(process.execPath, ['dist/main.js'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    let log = '';
    child.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));

    // Spans as the app exports them, and a wait for the first moment `done(spans)` holds.
    const spans: RecordedSpan[] = [];
    let pending = '';
    let check = () => {};
    (child.stdio[3] as Readable).on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      spans.push(...lines.map((line) => JSON.parse(line) as RecordedSpan));
      check();
    });
    const recorded = (done: (spans: RecordedSpan[]) => boolean) =>
      new Promise<void>((resolve, reject) => {
        // Only a failure reporter: the condition resolves it as soon as the spans arrive.
        const bound = setTimeout(() => reject(new Error(`the spans did not arrive within 15 s:\n${spans.map((s) => JSON.stringify(s)).join('\n')}\n${log}`)), 15_000);
        void exited.then(({ code, signal }) => {
          clearTimeout(bound);
          reject(new Error(`the app exited (${code ?? signal}) before the spans arrived:\n${log}`));
        });
        check = () => {
          if (!done(spans)) return;
          clearTimeout(bound);
          resolve();
        };
        check();
      });

    let jobId = '';
    try {
      await listening(port, exited, () => log);
      const response = await fetch(`http://127.0.0.1:${port}/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ item: 'lamp' }) });
      expect(response.status).toBe(201);
      // Done once the job's process span is in, and every ancestor of its send span up to a root.
      await recorded((all) => {
        const send = all.find((s) => s.name === 'send default');
        if (!send || !all.some((s) => s.name === 'process default' && s.parentSpanId === send.spanId)) return false;
        return ancestry(send, all).at(-1)!.parentSpanId === undefined;
      });
      jobId = String(spans.find((s) => s.name === 'send default')!.attributes['messaging.message.id']);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    }

    const processSpan = spans.find((s) => s.name === 'process default')!;
    const trace = spans.filter((s) => s.traceId === processSpan.traceId).sort((a, b) => a.startUs - b.startUs);
    const tree = trace.map((s) => `${'  '.repeat(ancestry(s, trace).length - 1)}${s.name}  [${s.scope}]`).join('\n');
    process.stdout.write(`${tree}\n`);

    // The request's span, from the HTTP instrumentation and named with the Express route, is an
    // ancestor of send, and the attempt hangs under send.
    expect(ancestry(processSpan, trace).map((s) => `${s.name} [${s.scope}]`)).toEqual([
      'process default [nestjs-durable-scheduler]',
      'send default [nestjs-durable-scheduler]',
      'request handler [@opentelemetry/instrumentation-express]',
      'POST /orders [@opentelemetry/instrumentation-http]',
    ]);
    expect(processSpan.attributes).toMatchObject({ 'messaging.message.id': jobId, 'durable_scheduler.job.state': 'succeeded' });

    // The tree the page draws: each line a span of that name (a `, ...` list: its first), scope and depth.
    expect(docs.drawn).toBeDefined();
    for (const line of docs.drawn!.split('\n').filter(Boolean)) {
      const [, indent, name, scope] = /^( *)(.+?) {2,}(\S+)$/.exec(line)!;
      const depth = indent!.length / 2;
      const wanted = name!.replace(/, \.\.\.$/, '');
      expect({ line, found: trace.some((s) => s.name === wanted && s.scope === scope && ancestry(s, trace).length - 1 === depth) }).toEqual({ line, found: true });
    }

    // Every package the blocks import is named in the page's `npm install` lines, at the version
    // this test ran (the project's devDependencies).
    for (const name of docs.imported) {
      const { version } = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
      const documented = docs.installs.get(name);
      expect({ name, documented, runs: documented !== undefined && (version === documented || version.startsWith(`${documented}.`)) }).toEqual({ name, documented, runs: true });
    }
  });
});
