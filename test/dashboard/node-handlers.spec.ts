import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { escapeHtml } from '../../lib/dashboard/html/html.js';
import { SchedulerDashboardModule } from '../../lib/dashboard/index.js';
import { localHandlers } from '../../lib/dashboard/nest/local-handlers.js';
import { HANDLERS_SHOWN, type LocalHandlers, type NodeHandler } from '../../lib/dashboard/pages/node-handlers.view.js';
import { workersPage } from '../../lib/dashboard/pages/workers.page.js';
import { Job, SchedulerModule, SchedulerOrchestrator, type BatchJobHandler, type JobHandler } from '../../lib/index.js';
import { JobHandlerRegistry, type RegisteredJob } from '../../lib/nest/job-handler.registry.js';
import { MemoryJobStore } from '../../lib/testing/index.js';
import { serveDashboard } from './dashboard-browser.js';

const ctx = { base: '/scheduler', now: new Date('2026-03-01T12:00:00Z'), readOnly: false, csrf: '' };
const rows = { shown: 200, more: true };

/** A handler as the page takes it: a plain one, unless the test says otherwise. */
function handler(name: string, extra: Partial<NodeHandler> = {}): NodeHandler {
  return { name, queue: 'default', batch: null, timeoutMs: null, transaction: true, ...extra };
}

/** The section "Handlers on this node" of a Workers page: everything from its heading on. */
function section(local: LocalHandlers | undefined): string {
  const text = workersPage(ctx, [], ctx.now, rows, local).text;
  const at = text.indexOf('<h2>Handlers on this node</h2>');
  expect(at).toBeGreaterThan(text.indexOf('<table id="workers"'));
  return text.slice(at, text.indexOf('</main>')).trimEnd();
}

/** The cells of each body row of the handlers table, as markup. */
function cells(text: string): string[][] {
  const body = /<table id="node-handlers">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(text)![1]!;
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => cell[1]!));
}

describe('the Workers page: handlers on this node', () => {
  it('lists each handler by wire name: its queue, whether it takes batches (size and wait), its timeout and its attempt transaction', () => {
    const text = section({
      runs: 'worker',
      workerId: 'web-1',
      handlers: [
        handler('mail.send', { queue: 'mail', timeoutMs: 30_000 }),
        handler('ledger.import', { queue: 'ledger', batch: { size: 50, waitMs: 200 }, transaction: false }),
        handler('audit.write', { batch: { size: 1, waitMs: 0 }, transaction: false, timeoutMs: 5_000 }),
      ],
    });
    expect(text).toContain('as its worker <code>web-1</code> runs them');
    expect(text).toContain('<thead><tr><th>Name</th><th>Queue</th><th>Batches</th><th class="num">Timeout (ms)</th><th>Attempt transaction</th></tr></thead>');
    expect(cells(text)).toEqual([
      ['<a href="/scheduler/jobs?name=audit.write"><code>audit.write</code></a>', '<a href="/scheduler/queues/default">default</a>', 'up to 1 job a call, no wait', '5000', 'no'],
      ['<a href="/scheduler/jobs?name=ledger.import"><code>ledger.import</code></a>', '<a href="/scheduler/queues/ledger">ledger</a>', 'up to 50 jobs a call, waits up to 200 ms to fill', 'none', 'no'],
      ['<a href="/scheduler/jobs?name=mail.send"><code>mail.send</code></a>', '<a href="/scheduler/queues/mail">mail</a>', 'no', '30000', 'yes'],
    ]);
    // Fixed at boot, so the refresh leaves it alone.
    expect(text).not.toContain('data-live');
  });

  it('escapes a hostile wire name and queue, makes their control characters visible and clips a long name; the link carries the whole name', () => {
    const name = `<script>alert(1)</script>\x1b[31m\u202e"'\`${'x'.repeat(300)}`;
    const queue = '"><img src=x onerror=alert(1)>';
    const text = section({ runs: 'worker', workerId: 'w"><script>alert(1)</script>', handlers: [handler(name, { queue })] });
    const [[nameCell, queueCell]] = cells(text) as [[string, string]];
    expect(nameCell).toMatch(/^<a href="\/scheduler\/jobs\?name=%3Cscript%3Ealert%281%29%3C%2Fscript%3E%1B%5B31m%E2%80%AE%22%27%60x{300}"><code>/);
    // 120 visible characters, an escape counting as its length: 119 of the name and the ellipsis.
    const visible = '<script>alert(1)</script>\\x1b[31m\\u202e"\'`';
    const clipped = `${visible}${'x'.repeat(119 - visible.length)}…`;
    expect(nameCell).toContain(`<code>${escapeHtml(clipped)}</code>`);
    expect(escapeHtml(clipped)).toBe(`&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31m\\u202e&quot;&#39;&#96;${'x'.repeat(119 - visible.length)}…`);
    expect(queueCell).toBe('<a href="/scheduler/queues/%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</a>');
    expect(text).toContain('<code>w&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</code>');
    expect(text).not.toContain('<script');
    expect(text).not.toContain('<img');
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202e]/);
  });

  it('says in one line why it lists none: served from the store alone, an app without a worker, or no handler registered', () => {
    expect(section(undefined)).toBe(
      '<h2>Handlers on this node</h2><p>This dashboard is served from the store alone, which records no handlers; mounted in a Nest app that runs a worker, it lists that app\'s handlers here.</p>',
    );
    expect(section({ runs: 'none' })).toBe('<h2>Handlers on this node</h2><p>This app runs no worker (<code>worker: false</code>), so no handler runs here.</p>');
    expect(cells(section({ runs: 'worker', workerId: 'web-1', handlers: [] }))).toEqual([['No <code>@Job</code> handler is registered in this app.']]);
  });

  it(`lists the first ${HANDLERS_SHOWN} handlers by name and says how many there are`, () => {
    const many = Array.from({ length: HANDLERS_SHOWN + 5 }, (_, i) => handler(`job.${String(HANDLERS_SHOWN + 4 - i).padStart(3, '0')}`));
    const text = section({ runs: 'worker', workerId: 'web-1', handlers: many });
    const listed = cells(text);
    expect(listed).toHaveLength(HANDLERS_SHOWN);
    expect(listed[0]![0]).toContain('<code>job.000</code>');
    expect(listed.at(-1)![0]).toContain(`<code>job.${HANDLERS_SHOWN - 1}</code>`);
    expect(text).toContain(`<p class="more">These are the first ${HANDLERS_SHOWN} of ${HANDLERS_SHOWN + 5} handlers, by name.</p>`);
  });

  it("reads the registry's definitions under the node's id, and none when the app runs no worker", () => {
    const registry = new JobHandlerRegistry();
    const definition = { retry: { maxAttempts: 3 } as never, transaction: false, timeoutMs: 10_000, batch: { size: 100, waitMs: 250 } };
    registry.add({ name: 'ledger.import', queue: 'ledger', definition } as Partial<RegisteredJob> as RegisteredJob);
    registry.add({ name: 'mail.send', queue: 'mail', definition: { retry: {} as never, transaction: true } } as Partial<RegisteredJob> as RegisteredJob);
    const node = { workerId: 'web-1' } as SchedulerOrchestrator['node'];
    expect(localHandlers(registry, { runsWorker: true, node })).toEqual({
      runs: 'worker',
      workerId: 'web-1',
      handlers: [
        { name: 'ledger.import', queue: 'ledger', batch: { size: 100, waitMs: 250 }, timeoutMs: 10_000, transaction: false },
        { name: 'mail.send', queue: 'mail', batch: null, timeoutMs: null, transaction: true },
      ],
    });
    expect(localHandlers(registry, { runsWorker: false, node })).toEqual({ runs: 'none' });
  });
});

@Job({ name: 'mail.send', queue: 'mail', timeoutMs: 30_000 })
class MailHandler implements JobHandler {
  async handle(): Promise<void> {}
}

@Job({ name: 'audit.write', transaction: false })
class AuditHandler implements JobHandler {
  async handle(): Promise<void> {}
}

@Job({ name: 'ledger.import', queue: 'mail', batch: { size: 50, waitMs: 200 } })
class LedgerImportHandler implements BatchJobHandler {
  async handle(): Promise<void> {}
}

describe('handlers on this node, as each way of serving the dashboard shows them', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /** Boots an app with three handlers, one of them a batch handler, and an open dashboard, and returns its Workers page. */
  async function workersOf(worker: boolean): Promise<{ text: string; workerId: string }> {
    @Module({
      imports: [
        SchedulerModule.forRoot({ store: new MemoryJobStore(), autoStart: false, worker, queues: ['default', 'mail'] }),
        SchedulerDashboardModule.forRoot({ allowUnguarded: true }),
      ],
      providers: [MailHandler, AuditHandler, LedgerImportHandler],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    const page = await fetch(`${await app.getUrl()}/scheduler/workers`);
    expect(page.status).toBe(200);
    return { text: await page.text(), workerId: app.get(SchedulerOrchestrator).node.workerId };
  }

  it('mounted in a Nest app that runs a worker, lists its handlers under its node id', async () => {
    const { text, workerId } = await workersOf(true);
    expect(text).toContain(`as its worker <code>${workerId}</code> runs them`);
    expect(cells(text)).toEqual([
      ['<a href="/scheduler/jobs?name=audit.write"><code>audit.write</code></a>', '<a href="/scheduler/queues/default">default</a>', 'no', 'none', 'no'],
      ['<a href="/scheduler/jobs?name=ledger.import"><code>ledger.import</code></a>', '<a href="/scheduler/queues/mail">mail</a>', 'up to 50 jobs a call, waits up to 200 ms to fill', 'none', 'no'],
      ['<a href="/scheduler/jobs?name=mail.send"><code>mail.send</code></a>', '<a href="/scheduler/queues/mail">mail</a>', 'no', '30000', 'yes'],
    ]);
  });

  it('mounted in an app built with worker: false, says no handler runs there', async () => {
    const { text } = await workersOf(false);
    expect(text).toContain('<h2>Handlers on this node</h2><p>This app runs no worker (<code>worker: false</code>), so no handler runs here.</p>');
    expect(text).not.toContain('id="node-handlers"');
  });

  it('served from the store alone, says it cannot list them', async () => {
    const { server, browser } = await serveDashboard(new MemoryJobStore());
    try {
      const page = await browser.get('/workers');
      expect(page.status).toBe(200);
      expect(page.text).toContain('<h2>Handlers on this node</h2><p>This dashboard is served from the store alone, which records no handlers;');
      expect(page.text).not.toContain('id="node-handlers"');
    } finally {
      await server.close();
    }
  });
});
