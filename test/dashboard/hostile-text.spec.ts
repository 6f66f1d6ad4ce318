import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { escapeHtml, href, html, multiline } from '../../lib/dashboard/html/html.js';
import type { DashboardServer } from '../../lib/dashboard/index.js';
import { workersPage } from '../../lib/dashboard/pages/workers.page.js';
import { MemoryJobStore } from '../../lib/store/index.js';
import { recordVerifyRun, verifyHistory } from '../../lib/verify/index.js';
import { serveDashboard, type DashboardBrowser } from './dashboard-browser.js';

/** Text an attacker can get into a job: through a payload, an error, an output, a key or an actor. */
const HOSTILE = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "' autofocus onfocus='alert(1)",
  'javascript:alert(1)',
  '`${alert(1)}`',
  '</pre></td></table><script src=//evil.example/x.js></script>',
  'red \x1b[31mALERT\x1b[0m bell\x07 del\x7f',
  'right-to-left \u202eexe.txt',
  'line\u2028separator',
].join(' | ');

const TAGS = new Set('html head meta title link script body header strong nav a span main p h1 h2 section table thead tbody tr th td form label select option input button dl dt dd code pre small time ol ul li footer h3 figure figcaption svg line g rect text div details summary'.split(' '));
const ATTRIBUTES = new Set('lang charset name content rel href src defer class id aria-current aria-label role data-live scope colspan method action formaction type value size selected datetime viewBox xmlns x y x1 y1 x2 y2 width height'.split(' '));

/**
 * Fails if a page carries markup that came from job text: every tag must be one the dashboard
 * writes, with attributes it writes, the only script its own file, no link to another scheme,
 * and no control character left raw.
 */
function expectInert(text: string): void {
  for (const [tag, name, attributes] of text.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)([^>]*)>/g)) {
    expect({ tag, known: TAGS.has(name!.toLowerCase()) }).toEqual({ tag, known: true });
    const names = [...attributes!.matchAll(/\s([^\s=]+)(?:="[^"]*")?/g)].map((match) => match[1]!);
    for (const attribute of names) expect({ tag, attribute, known: ATTRIBUTES.has(attribute) }).toEqual({ tag, attribute, known: true });
    if (name === 'script') expect(tag).toMatch(/^<script src="[^"]*\/assets\/dashboard\.js" defer>$/);
  }
  expect(text).not.toMatch(/(href|src|action)="(?!\/|\?)/i);
  // eslint-disable-next-line no-control-regex
  expect(text).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202e\u2028]/);
}

describe('hostile text in the dashboard', () => {
  it('html escapes every value it did not write, in content and in attributes', () => {
    const value = '<a href="x" onclick=\'y\'>`&`</a>';
    expect(html`<p title="${value}">${value}</p>`.text).toBe(
      '<p title="&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&#96;&amp;&#96;&lt;/a&gt;">&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&#96;&amp;&#96;&lt;/a&gt;</p>',
    );
    expect(html`${[value, 1, null, undefined, false]}`.text).toBe(escapeHtml(value) + '1');
    expect(escapeHtml('a\x1b[31mb\u202ec\nd')).toBe('a\\x1b[31mb\\u202ec\\nd');
    expect(multiline('a\nb\x1b').text).toBe('a\nb\\x1b');
  });

  it('href percent-encodes each segment, so an id or a name cannot change the path or the scheme', () => {
    expect(href('/scheduler', ['jobs', '../../admin'])).toBe('/scheduler/jobs/..%2F..%2Fadmin');
    expect(href('', ['queues', 'javascript:alert(1)', 'pause'])).toBe('/queues/javascript%3Aalert(1)/pause');
    expect(href('/s', ['jobs'], { name: '"><x', id: ['a&b', 'c'] })).toBe('/s/jobs?name=%22%3E%3Cx&id=a%26b&id=c');
  });

  it('renders the handlers on this node (wire names, queues, the node id) as inert text, a long name clipped', () => {
    const at = new Date('2026-03-01T12:00:00Z');
    const handlers = [HOSTILE, `${'x'.repeat(5_000)}${HOSTILE}`].map((name) => ({ name, queue: HOSTILE.slice(0, 64), batch: { size: 10, waitMs: 5 }, timeoutMs: 1_000, transaction: false }));
    const page = workersPage({ base: '/scheduler', now: at, readOnly: false, csrf: '' }, [], at, { shown: 200, more: true }, { runs: 'worker', workerId: HOSTILE.slice(0, 120), handlers }).text;
    expectInert(page);
    expect(page).toContain('<code>&lt;script&gt;alert(1)&lt;/script&gt; | &quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
    // Each cell shows at most 120 characters of a name; its link carries the whole name, percent-encoded.
    const shown = [...page.matchAll(/<td><a href="([^"]*)"><code>([^<]*)<\/code><\/a><\/td>/g)].map(([, link, text]) => ({ link: link!.length, text: text!.replaceAll(/&[a-z0-9#]+;/g, '.') }));
    expect(shown.map(({ text }) => text.length)).toEqual([120, 120]);
    expect(shown[1]!.text).toBe(`${'x'.repeat(119)}…`);
    expect(shown[1]!.link).toBeGreaterThan(5_000);
  });

  describe('on every page that shows job text', () => {
    let store: MemoryJobStore;
    let server: DashboardServer;
    let browser: DashboardBrowser;

    beforeEach(async () => {
      store = new MemoryJobStore();
      ({ server, browser } = await serveDashboard(store, { actor: HOSTILE.slice(0, 200) }));
    });
    afterEach(async () => {
      await server.close();
    });

    it('renders names, errors, outputs, payloads, keys, queues and actors as inert text', async () => {
      const queue = 'hostile';
      const failed = await store.jobEnqueue({ job: { name: 'javascript:alert', payload: { html: HOSTILE }, queue, maxAttempts: 1, concurrencyKey: HOSTILE.slice(0, 100), group: HOSTILE.slice(0, 100) } });
      const done = await store.jobEnqueue({ job: { name: 'report', payload: {}, queue } });
      const claimed = await store.jobClaim({ workerId: 'w"><script>alert(1)</script>', limit: 2, queues: [queue], leaseMs: 30_000 });
      expect(claimed).toHaveLength(2);
      await store.jobHeartbeat({ workerId: 'w"><script>alert(1)</script>', leases: [{ jobId: done.id, attempt: 1, progress: { step: HOSTILE } }], leaseMs: 30_000 });
      await store.jobCompleteMany({
        workerId: 'w"><script>alert(1)</script>',
        outcomes: [
          { jobId: failed.id, attempt: 1, kind: 'failed', error: HOSTILE, retryDelayMs: 0 },
          { jobId: done.id, attempt: 1, kind: 'succeeded', output: { note: HOSTILE } },
        ],
      });
      await store.concurrencyLimitSet({ target: { key: HOSTILE.slice(0, 100) }, max: 2, actor: '<script>alert(1)</script>' });
      await store.rateLimitSet({ target: { key: HOSTILE.slice(0, 100) }, rate: { max: 2, perMs: 60_000 }, actor: '<script>alert(1)</script>' });
      const { schedule } = await store.scheduleUpsert({ schedule: { name: 'javascript:void', everyMs: 60_000, queue } });
      await browser.post(`/queues/${encodeURIComponent(queue)}/pause`);
      await store.observerLease({ observer: 'obs', workerId: 'w"><script>alert(1)</script>', leaseMs: 30_000 });
      await store.observerFail({ observer: 'obs', workerId: 'w"><script>alert(1)</script>', error: HOSTILE, retryDelayMs: 1_000 });
      await store.nodeBeat({ id: 'node"><script>alert(1)</script>', host: HOSTILE.slice(0, 120), pid: 1, version: '<img src=x onerror=alert(1)>', queues: [queue], concurrency: 1, running: 0 });
      // A recorded verify run whose violation names a hostile worker, as wrong_holder's sentence would.
      const verified = await verifyHistory(store);
      const hostileViolation = { rule: 'wrong_holder' as const, jobId: failed.id, entryIds: [1, 2], message: `Job ${failed.id} ended the lease of ${HOSTILE}.` };
      await recordVerifyRun(store, { ...verified, violationCount: 1, violations: [hostileViolation], notChecked: [HOSTILE] }, { actor: '<script>alert(1)</script>', startedAt: new Date() });

      const pages = [
        '/',
        '/jobs',
        `/jobs?queue=${encodeURIComponent('q"><img src=x onerror=alert(1)>')}&name=${encodeURIComponent('"><script>alert(1)</script>')}`,
        `/jobs/${failed.id}`,
        `/jobs/${failed.id}?reveal=payload`,
        `/jobs/${done.id}`,
        `/jobs/${failed.id}/replay`,
        '/dead-letters',
        `/dead-letters/replay?id=${failed.id}`,
        '/schedules',
        `/schedules/${schedule.id}`,
        `/queues/${encodeURIComponent(queue)}/resume`,
        '/limits',
        '/audit',
        '/workers',
        '/observers',
        '/groups',
        `/groups?after=${encodeURIComponent('"><script>')}`,
        '/guarantees',
        `/queues/${queue}`,
        `/jobs/${encodeURIComponent('<script>alert(1)</script>')}`,
        `/jobs/${failed.id}/error`,
        `/jobs/${failed.id}/payload`,
        `/jobs/${done.id}/output`,
        `/jobs/${done.id}/progress`,
        `/jobs/${failed.id}/history/${(await store.jobHistory({ jobId: failed.id })).at(-1)!.id}`,
        `/dead-letters?name=${encodeURIComponent('javascript:alert')}&error=${encodeURIComponent(HOSTILE.slice(0, 60))}`,
        `/?after=${queue}`,
        `/queues?name=${queue}`,
        `/limits?after=${encodeURIComponent(`key:${HOSTILE.slice(0, 100)}`)}`,
        `/audit?more=1`,
      ];
      for (const path of pages) {
        const page = await browser.get(path);
        expect({ path, status: page.status < 500 }).toEqual({ path, status: true });
        expectInert(page.text);
      }
      // The text is there, escaped and with its control characters made visible.
      const job = await browser.get(`/jobs/${failed.id}`);
      expect(job.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(job.text).toContain('red \\x1b[31mALERT\\x1b[0m bell\\x07 del\\x7f');
      expect(job.text).toContain('right-to-left \\u202eexe.txt');
      expect((await browser.get('/audit')).text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      const reported = (await browser.get(`/jobs/${done.id}`)).text;
      expect(reported).toMatch(/<h2>Progress<\/h2>\s*<pre class="progress">\{\n  &quot;step&quot;: &quot;&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
      expect(reported).toContain('right-to-left \\u202eexe.txt');
      expect(job.text).toMatch(/<h2>Progress<\/h2>\s*<p>None reported\.<\/p>/);
    });

    it('renders a debounce or throttle key as inert text on the job page, in why it waits and in the run-now question', async () => {
      // A window key cannot hold C0 controls, but can hold a C1 control (\x9b is an 8-bit CSI), bidi controls and separators.
      const key = `<script>"&'</script> ünïcødé 🙂 \u202eevil\u2028 csi\x9b31m`;
      const debounced = await store.jobEnqueue({ job: { name: 'digest', payload: {}, debounce: { key, windowMs: 60_000 } } });
      const throttled = await store.jobEnqueue({ job: { name: 'digest', payload: {}, throttle: { key, windowMs: 60_000 } } });
      expect((await store.jobGet({ jobId: debounced.id }))!.window!.key).toBe(key);
      const shown = '&lt;script&gt;&quot;&amp;&#39;&lt;/script&gt; ünïcødé 🙂 \\u202eevil\\u2028 csi\\x9b31m';
      for (const path of [`/jobs/${debounced.id}`, `/jobs/${throttled.id}`, `/jobs/${debounced.id}/run-now`]) {
        const page = await browser.get(path);
        expect({ path, status: page.status }).toEqual({ path, status: 200 });
        expectInert(page.text);
        expect(page.text).not.toContain('\x9b');
      }
      const debouncePage = (await browser.get(`/jobs/${debounced.id}`)).text;
      expect(debouncePage).toContain(`<dt>Debounce</dt><dd>key <code>${shown}</code>, latest run <time`);
      expect(debouncePage).toContain(`It is debounced: it runs at <time`);
      expect(debouncePage).toContain(`unless another enqueue with key <strong>${shown}</strong> pushes it later`);
      expect((await browser.get(`/jobs/${throttled.id}`)).text).toContain(`<dt>Throttle</dt><dd>key <code>${shown}</code>, drops enqueues until <time`);
    });

    it('renders a batch, its jobs and callbacks, their errors and the actor of its cancel as inert text; a hostile batch id in the address is refused, inert', async () => {
      // An actor the store takes (no control characters) that is still markup.
      await server.close();
      ({ server, browser } = await serveDashboard(store, { actor: `<script>alert(1)</script> "><img src=x onerror=alert(1)> ' autofocus onfocus='alert(1)` }));
      const jobs = [0, 1, 2].map((i) => ({ name: 'javascript:alert', payload: { html: HOSTILE, i }, queue: 'hostile-batch', maxAttempts: 1 }));
      const callback = (name: string) => ({ name, payload: { html: HOSTILE }, queue: 'hostile-callbacks' });
      const batch = await store.jobEnqueueBatch({ jobs, onSuccess: callback('javascript:success'), onComplete: callback('javascript:complete'), onFailure: callback('javascript:failure') });
      const [failed, ok] = batch.jobs.map((job) => job.id);
      await store.jobClaim({ workerId: 'w"><script>alert(1)</script>', limit: 3, queues: ['hostile-batch'], leaseMs: 30_000 });
      await store.jobCompleteMany({
        workerId: 'w"><script>alert(1)</script>',
        outcomes: [
          { jobId: failed!, attempt: 1, kind: 'dead_lettered', error: HOSTILE },
          { jobId: ok!, attempt: 1, kind: 'succeeded', output: { note: HOSTILE } },
        ],
      });
      const idle = await store.jobEnqueueBatch({ jobs: [{ name: 'javascript:alert', payload: {}, queue: 'hostile-idle' }], onFailure: callback('javascript:failure') });
      await store.jobClaim({ workerId: 'w', limit: 1, queues: ['hostile-idle'], leaseMs: 30_000 });
      await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: idle.jobs[0]!.id, attempt: 1, kind: 'succeeded' }] });
      // The cancel is audited per job with the hostile actor.
      expect((await browser.post(`/batches/${batch.batchId}/cancel`)).status).toBe(303);
      for (const path of [
        '/batches',
        `/batches?before=${idle.batchId}`,
        `/batches/${batch.batchId}`,
        `/batches/${batch.batchId}?more=1`,
        `/batches/${batch.batchId}?notice=batch.cancel_requested`,
        `/batches/${idle.batchId}/cancel`,
        `/jobs/${failed}`,
        `/jobs/${batch.callbacks.onFailure}`,
        `/jobs/${idle.callbacks.onFailure}`,
        '/audit',
      ]) {
        const page = await browser.get(path);
        expect({ path, status: page.status < 500 }).toEqual({ path, status: true });
        expectInert(page.text);
      }
      for (const path of [
        `/batches/${encodeURIComponent('<script>alert(1)</script>')}`,
        `/batches/${encodeURIComponent(HOSTILE.slice(0, 120))}/cancel`,
        `/batches?before=${encodeURIComponent(HOSTILE.slice(0, 200))}`,
        `/batches/${encodeURIComponent('"><img src=x onerror=alert(1)>')}?more=1`,
      ]) {
        const page = await browser.get(path);
        expect({ path, status: page.status }).toEqual({ path, status: 400 });
        expectInert(page.text);
        expect(page.text).toContain('must be a UUID, got');
      }
      const refused = await browser.post(`/batches/${encodeURIComponent('<script>alert(1)</script>')}/cancel`);
      expect(refused.status).toBe(400);
      expectInert(refused.text);
      expect(refused.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect((await browser.get('/audit')).text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect((await browser.get(`/jobs/${idle.callbacks.onFailure}`)).text).toContain('It will not run: it is the <code>onFailure</code> callback of batch');
    });

    it('renders a sequence key as inert text on the job pages, in why a job waits, and on the sequences page, its next page and its questions', async () => {
      // A sequence key cannot hold C0 controls, but can hold a C1 control (\x9b is an 8-bit CSI), bidi controls and separators.
      const key = `<script>"&'</script> ünïcødé 🙂 \u202eevil\u2028 csi\x9b31m`;
      const shown = '&lt;script&gt;&quot;&amp;&#39;&lt;/script&gt; ünïcødé 🙂 \\u202eevil\\u2028 csi\\x9b31m';
      const failed = await store.jobEnqueue({ job: { name: 'acct.open', payload: {}, queue: 'heads', maxAttempts: 1, sequence: { key } } });
      const waiting = await store.jobEnqueue({ job: { name: 'acct.deposit', payload: {}, sequence: { key } } });
      const behind = await store.jobEnqueue({ job: { name: 'acct.close', payload: {}, sequence: { key, afterFailure: 'continue' } } });
      await store.jobClaim({ workerId: 'w', limit: 1, queues: ['heads'], leaseMs: 30_000 });
      await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: failed.id, attempt: 1, kind: 'dead_lettered', error: HOSTILE }] });
      expect((await store.jobGet({ jobId: waiting.id }))!.sequence!.key).toBe(key);
      for (const path of [
        `/jobs/${failed.id}`,
        `/jobs/${waiting.id}`,
        `/jobs/${behind.id}`,
        '/sequences',
        `/sequences?after=${encodeURIComponent(key)}`,
        `/sequences/replay?id=${failed.id}`,
        `/sequences/cancel?id=${failed.id}`,
        '/dead-letters',
      ]) {
        const page = await browser.get(path);
        expect({ path, status: page.status }).toEqual({ path, status: 200 });
        expectInert(page.text);
        expect(page.text).not.toContain('\x9b');
      }
      // A cursor no key can be (it holds C0 controls) is refused in one sentence, itself inert.
      const refused = await browser.get(`/sequences?after=${encodeURIComponent(HOSTILE.slice(0, 200))}`);
      expect(refused.status).toBe(400);
      expectInert(refused.text);
      const held = (await browser.get(`/jobs/${waiting.id}`)).text;
      expect(held).toContain(`<dt>Sequence</dt><dd>key <code>${shown}</code>, runs after <a href="/jobs/${failed.id}">acct.open</a>`);
      expect(held).toContain(`Sequence <strong>${shown}</strong> is blocked by the failure of job`);
      expect((await browser.get(`/jobs/${behind.id}`)).text).toContain(`It waits behind job <a href="/jobs/${waiting.id}">acct.deposit</a> <span class="state state-awaiting_parents">awaiting parents</span> of sequence <strong>${shown}</strong>`);
      const list = (await browser.get('/sequences')).text;
      expect(list).toContain(`<td><code>${shown}</code></td>`);
      expect(list).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    });

    it('renders a group as inert text on the groups page and its next page, and refuses a cursor no group can be', async () => {
      const group = `<script>"&'</script> ünïcødé 🙂 \u202eevil\u2028 csi\x9b31m`;
      const shown = '&lt;script&gt;&quot;&amp;&#39;&lt;/script&gt; ünïcødé 🙂 \\u202eevil\\u2028 csi\\x9b31m';
      await store.jobEnqueue({ job: { name: 'export.build', payload: {}, group } });
      for (const path of ['/groups', `/groups?after=${encodeURIComponent('<')}`]) {
        const page = await browser.get(path);
        expect({ path, status: page.status }).toEqual({ path, status: 200 });
        expectInert(page.text);
        expect(page.text).not.toContain('\x9b');
        expect(page.text).toContain(`<td><code>${shown}</code></td>`);
      }
      const refused = await browser.get(`/groups?after=${encodeURIComponent(HOSTILE.slice(0, 200))}`);
      expect(refused.status).toBe(400);
      expectInert(refused.text);
    });
  });
});
