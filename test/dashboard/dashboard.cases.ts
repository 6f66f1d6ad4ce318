import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ALL_PARENTS_SUCCEEDED } from '../../lib/core/index.js';
import type { ConformanceTarget, StoreUnderTest } from '../../lib/store-kit/conformance/index.js';
import type { DashboardServer } from '../../lib/dashboard/index.js';
import { boundedPageCases } from './bounded-pages.cases.js';
import { recordVerifyRun, verifyHistory } from '../../lib/verify/index.js';
import { deadLetter, endJobs, enqueueBatch, failInSequence, linkedJobIds } from './dashboard-fixtures.js';
import { serveDashboard, type DashboardBrowser } from './dashboard-browser.js';
import { polishCases } from './polish.cases.js';

export { deadLetter, linkedJobIds } from './dashboard-fixtures.js';

/** The dashboard's pages and actions, server-level, on one store. */
export function runDashboardCases(makeTarget: () => Promise<ConformanceTarget>): void {
  let target: ConformanceTarget;
  let h: StoreUnderTest;
  let server: DashboardServer;
  let browser: DashboardBrowser;

  beforeAll(async () => {
    target = await makeTarget();
  });
  afterAll(async () => {
    await target.teardown();
  });
  beforeEach(async () => {
    h = await target.open();
    ({ server, browser } = await serveDashboard(h.store));
  });
  afterEach(async () => {
    await server.close();
  });

  describe('pages', () => {
    it('the overview shows each queue with its counts by state and the cluster totals', async () => {
      await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
      await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
      await deadLetter(h.store, 'charge', 'card declined');
      const page = await browser.get('/');
      expect(page.status).toBe(200);
      const mailRow = /<tr>\s*<th scope="row"><a href="\/queues\/mail">mail<\/a><\/th>([\s\S]*?)<\/tr>/.exec(page.text);
      expect(mailRow?.[1]).toMatch(/^\s*<td class="num">2<\/td>/); // scheduled is the first state column
      expect(page.text).toMatch(/<span class="value">1<\/span><span class="label">Dead-lettered<\/span>/);
      expect(page.text).toMatch(/<span class="value">2<\/span><span class="label">Scheduled<\/span>/);
      // Both mail jobs are due; one more waits for later and is scheduled but not due.
      await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail', delayMs: 3_600_000 } });
      const later = await browser.get('/');
      expect(later.text).toMatch(/<span class="value">2<\/span><span class="label">Due now<\/span>/);
      expect(later.text).toMatch(/<span class="value">3<\/span><span class="label">Scheduled<\/span>/);
      const row = /<tr>\s*<th scope="row"><a href="\/queues\/mail">mail<\/a><\/th>([\s\S]*?)<\/tr>/.exec(later.text)![1]!;
      expect([...row.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((m) => m[1]).slice(7, 8)).toEqual(['2']);
      expect((await browser.get('/queues/mail')).text).toContain('<dt>Due now</dt><dd>2</dd>');
    });

    it('the overview says what holds back vacuum where the store keeps old row versions (PostgreSQL), and nothing elsewhere', async () => {
      const health = await h.store.storeHealth();
      const page = await browser.get('/');
      expect(page.text.includes('<p id="database" data-live')).toBe(health.deadJobRows !== null);
      if (health.deadJobRows !== null) expect(page.text).toMatch(/Jobs table: [\d,]+ dead rows beside [\d,]+ live, last vacuumed /);
    });

    it('the overview shows the oldest due job of all queues, and a paused queue’s counts too', async () => {
      expect((await browser.get('/')).text).toMatch(/<span class="value">none waiting<\/span><span class="label">Oldest due job waits<\/span>/);
      await h.store.jobEnqueue({ job: { name: 'report.build', payload: {}, queue: 'slow' } });
      await h.advance(300_000);
      await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'fast' } });
      await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'fast', delayMs: 3_600_000 } });
      await h.store.queuePause({ queue: 'slow' });
      const page = await browser.get('/');
      expect(page.text).toMatch(/<span class="value">5 min<\/span><span class="label">Oldest due job waits<\/span>/);
      expect(page.text).toMatch(/<span class="value">2<\/span><span class="label">Due now<\/span>/);
      const dueOf = (queue: string) => {
        const row = new RegExp(`<th scope="row"><a href="/queues/${queue}">${queue}</a></th>([\\s\\S]*?)</tr>`).exec(page.text)![1]!;
        return [...row.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((m) => m[1])[7];
      };
      expect([dueOf('slow'), dueOf('fast')]).toEqual(['1', '1']);
    });

    it('the jobs page filters by state, queue and name, and pages through older jobs by keyset', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 55; i++) ids.push((await h.store.jobEnqueue({ job: { name: i % 2 ? 'odd' : 'even', payload: {}, queue: i < 50 ? 'bulk' : 'other' } })).id);
      const first = await browser.get('/jobs?queue=bulk');
      expect(first.status).toBe(200);
      const firstIds = linkedJobIds(first.text);
      expect(firstIds).toEqual([...ids.slice(0, 50)].reverse().slice(0, 50));
      const byName = await browser.get('/jobs?name=odd&queue=other');
      expect(linkedJobIds(byName.text).sort()).toEqual(ids.slice(50).filter((_, i) => (i + 50) % 2 === 1).sort());
      const all = await browser.get('/jobs');
      const older = /<a rel="next" href="([^"]+)">Older<\/a>/.exec(all.text)?.[1]?.replace(/&amp;/g, '&');
      expect(older).toBeDefined();
      const second = await browser.get(older!);
      expect([...linkedJobIds(all.text), ...linkedJobIds(second.text)]).toEqual([...ids].reverse());
      expect(second.text).toContain('No older jobs.');
      const failed = await browser.get('/jobs?state=dead_lettered');
      expect(linkedJobIds(failed.text)).toEqual([]);
    });

    it('the jobs page filters by id prefix and enqueue time, sorts oldest first, and pages that way', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 52; i++) {
        ids.push((await h.store.jobEnqueue({ job: { name: 'step', payload: {}, queue: 'q' } })).id);
        if (i === 50) await h.advance(120_000);
      }
      const prefix = ids[7]!.slice(0, 30);
      const byPrefix = await browser.get(`/jobs?id=${prefix}`);
      expect(linkedJobIds(byPrefix.text)).toEqual(ids.filter((id) => id.startsWith(prefix)).reverse());
      expect(linkedJobIds(byPrefix.text)).toContain(ids[7]);
      expect(linkedJobIds((await browser.get(`/jobs?id=${ids[7]}`)).text)).toEqual([ids[7]]);
      const last = (await h.store.jobGet({ jobId: ids[51]! }))!.createdAt;
      const from = new Date(last.getTime() - 60_000).toISOString().slice(0, 16);
      expect(linkedJobIds((await browser.get(`/jobs?from=${from}`)).text)).toEqual([ids[51]]);
      expect(linkedJobIds((await browser.get(`/jobs?to=${from}&queue=q`)).text)).toEqual([...ids.slice(0, 51)].reverse().slice(0, 50));
      const oldest = await browser.get('/jobs?order=oldest');
      expect(linkedJobIds(oldest.text)).toEqual(ids.slice(0, 50));
      expect(oldest.text).toContain('Enqueued ↑');
      const newer = /<a rel="next" href="([^"]+)">Newer<\/a>/.exec(oldest.text)?.[1]?.replace(/&amp;/g, '&');
      expect(newer).toMatch(/order=oldest&after=/);
      expect(linkedJobIds((await browser.get(newer!)).text)).toEqual(ids.slice(50));
      expect((await browser.get('/jobs?id=xyz')).status).toBe(400);
      const badTime = await browser.get('/jobs?from=yesterday');
      expect(badTime.status).toBe(400);
      expect(badTime.text).toContain('from must be a date and time such as 2026-12-01T09:30 (UTC)');
    });

    it('the job page shows fields, error and timeline, and hides the payload until it is revealed', async () => {
      const id = await deadLetter(h.store, 'charge', 'card declined\n  at charge.ts:1', { card: '4242-SECRET' });
      const page = await browser.get(`/jobs/${id}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('card declined\n  at charge.ts:1');
      expect(page.text).toMatch(/state-dead_lettered/);
      expect(page.text).not.toContain('4242-SECRET');
      expect(page.text).toContain(`href="/jobs/${id}?reveal=payload"`);
      const revealed = await browser.get(`/jobs/${id}?reveal=payload`);
      expect(revealed.text).toContain('4242-SECRET');
      expect(revealed.headers.get('cache-control')).toBe('no-store');
      expect(page.text).toMatch(/<dt>Priority<\/dt>\s*<dd>0 \(default\)<\/dd>/);
      const { id: urgent } = await h.store.jobEnqueue({ job: { name: 'charge', payload: {}, priority: -7, delayMs: 3_600_000 } });
      expect((await browser.get(`/jobs/${urgent}`)).text).toMatch(/<dt>Priority<\/dt>\s*<dd>-7<\/dd>/);
      // A job's group (docs/groups.md) is shown; a job without one shows none.
      expect(page.text).not.toContain('<dt>Group</dt>');
      const { id: grouped } = await h.store.jobEnqueue({ job: { name: 'charge', payload: {}, group: 'tenant-9', delayMs: 3_600_000 } });
      expect((await browser.get(`/jobs/${grouped}`)).text).toMatch(/<dt>Group<\/dt>\s*<dd>tenant-9<\/dd>/);
    });

    it('the dead-letter page groups by name and error, and links the bulk replay of each group', async () => {
      const a = await deadLetter(h.store, 'charge', 'card declined');
      const b = await deadLetter(h.store, 'charge', 'card declined');
      const c = await deadLetter(h.store, 'ship', 'no address');
      const page = await browser.get('/dead-letters');
      expect(page.text).toMatch(/2 × <code>charge<\/code>: <span class="error">card declined<\/span>/);
      expect(page.text).toMatch(/1 × <code>ship<\/code>: <span class="error">no address<\/span>/);
      expect(page.text).toContain('href="/dead-letters/replay?name=charge&amp;error=card+declined">Replay these 2</a>');
      expect(page.text).toContain(`name="id" value="${c}"`);
      const group = await browser.get('/dead-letters/replay?name=charge&error=card+declined');
      expect(group.text).toContain('Replay 2 dead letters?');
      for (const id of [a, b]) expect(group.text).toContain(`<input type="hidden" name="id" value="${id}">`);
      expect(group.text).not.toContain(c);
    });

    it('the sequences page lists blocked sequences by key, each failed job with its error and the job waiting behind it; the navigation and the dead-letter page lead there', async () => {
      expect((await browser.get('/')).text).toContain('<a href="/sequences">Sequences</a>');
      const empty = await browser.get('/sequences');
      expect(empty.status).toBe(200);
      expect(empty.text).toContain('<td colspan="7">No sequence is blocked.</td>');
      expect(empty.text).toContain('<a href="/sequences" aria-current="page">Sequences</a>');
      expect((await browser.get('/dead-letters')).text).not.toContain('href="/sequences">Sequences</a> lists them');
      const held: Record<string, { failed: string; next: string }> = {};
      for (const key of ['acct-b', 'acct-a']) {
        const failed = await failInSequence(h.store, key, `ledger refused ${key}\n    at post (ledger.ts:1:1)`);
        const next = (await h.store.jobEnqueue({ job: { name: 'acct.deposit', payload: {}, queue: 'ledger', sequence: { key } } })).id;
        held[key] = { failed, next };
      }
      // Not blocked: its next job runs after failures, and a failed job with nothing behind it holds nothing.
      await failInSequence(h.store, 'acct-c');
      await h.store.jobEnqueue({ job: { name: 'acct.deposit', payload: {}, queue: 'ledger', sequence: { key: 'acct-c', afterFailure: 'continue' } } });
      await failInSequence(h.store, 'acct-d');
      const page = await browser.get('/sequences');
      const rows = [...page.text.matchAll(/<tr>\s*<td><input[^>]*><\/td>\s*<td><code>([^<]+)<\/code><\/td>([\s\S]*?)<\/tr>/g)];
      expect(rows.map((m) => m[1])).toEqual(['acct-a', 'acct-b']);
      const row = rows[0]![2]!;
      const failedAt = (await h.store.jobGet({ jobId: held['acct-a']!.failed }))!.finishedAt!.toISOString();
      expect(row).toContain(`<td><a href="/jobs/${held['acct-a']!.failed}">acct.open</a> <span class="state state-dead_lettered">dead lettered</span></td>`);
      expect(row).toContain('<td class="error">ledger refused acct-a</td>');
      expect(row).toContain(`<td><time datetime="${failedAt}">`);
      expect(row).toContain(`<td><a class="id" href="/jobs/${held['acct-a']!.next}">${held['acct-a']!.next}</a></td>`);
      expect(row).toContain(`<a class="action" href="/sequences/replay?id=${held['acct-a']!.failed}">Replay</a> <a class="action" href="/sequences/cancel?id=${held['acct-a']!.failed}">Cancel</a>`);
      expect(page.text).toContain(`<input type="checkbox" name="id" value="${held['acct-b']!.failed}"`);
      expect(page.text).toContain('<form method="post" action="/sequences/replay">');
      expect(page.text).toContain('formaction="/sequences/cancel">Cancel selected</button>');
      expect(page.text).not.toContain('Next 100 sequences');
      expect((await browser.get('/dead-letters')).text).toContain('<p>Some failed jobs hold back the next job of their sequence: <a href="/sequences">Sequences</a> lists them.</p>');
      // The page after a key, as its link writes it: the key is taken as it is, spaces and all.
      expect([...(await browser.get('/sequences?after=acct-a')).text.matchAll(/<td><code>([^<]+)<\/code><\/td>/g)].map((m) => m[1])).toEqual(['acct-b']);
      expect((await browser.get('/sequences?after=acct-b')).text).toContain('No blocked sequence after this key.');
      expect((await browser.get('/sequences/pause')).status).toBe(404);
    });

    it('the groups page lists the groups with waiting jobs by name, each with its due jobs and how long the oldest waited, its later jobs and its cap; the navigation leads there', async () => {
      expect((await browser.get('/')).text).toContain('<a href="/groups">Groups</a>');
      const empty = await browser.get('/groups');
      expect(empty.status).toBe(200);
      expect(empty.text).toContain('<a href="/groups" aria-current="page">Groups</a>');
      expect(empty.text).toContain('<td colspan="5">No group has waiting jobs.</td>');
      const [oldest] = (await h.store.jobEnqueueMany({ jobs: [1, 2, 3].map((i) => ({ name: 'export.build', payload: i, group: 'tenant-b' })) })).map((r) => r.id);
      await h.store.jobEnqueue({ job: { name: 'export.build', payload: 4, group: 'tenant-b', delayMs: 3_600_000 } });
      await h.store.jobEnqueue({ job: { name: 'export.build', payload: 5, group: 'tenant-a', delayMs: 3_600_000 } });
      await h.store.jobEnqueue({ job: { name: 'export.build', payload: 6 } });
      await h.store.concurrencyLimitSet({ target: { key: 'tenant-b' }, max: 2 });
      const page = await browser.get('/groups');
      const rows = [...page.text.matchAll(/<tr>\s*<td><code>([^<]+)<\/code><\/td>([\s\S]*?)<\/tr>/g)];
      expect(rows.map((m) => m[1])).toEqual(['tenant-a', 'tenant-b']);
      expect(rows[0]![2]).toMatch(/^\s*<td class="num">0<\/td>\s*<td>—<\/td>\s*<td class="num">1<\/td>\s*<td class="num">—<\/td>\s*$/);
      const dueAt = (await h.store.jobGet({ jobId: oldest! }))!.runAt.toISOString();
      expect(rows[1]![2]).toMatch(new RegExp(`^\\s*<td class="num">3</td>\\s*<td><time datetime="${dueAt}">[^<]+</time> <small>[^<]+</small></td>\\s*<td class="num">1</td>\\s*<td class="num">2</td>\\s*$`));
      expect(page.text).not.toContain('Next 100 groups');
      // The page after a group, as its link writes it.
      expect([...(await browser.get('/groups?after=tenant-a')).text.matchAll(/<td><code>([^<]+)<\/code><\/td>/g)].map((m) => m[1])).toEqual(['tenant-b']);
      expect((await browser.get('/groups?after=tenant-b')).text).toContain('No group with waiting jobs after this one.');
      expect((await browser.get(`/groups?after=${'x'.repeat(201)}`)).status).toBe(400);
      expect((await browser.get('/groups/tenant-a')).status).toBe(404);
    });

    it('the guarantees page shows the last recorded verify run in full, the runs before it and the rules; with none recorded it says how to run one', async () => {
      expect((await browser.get('/')).text).toContain('<a href="/guarantees">Guarantees</a>');
      const empty = await browser.get('/guarantees');
      expect(empty.status).toBe(200);
      expect(empty.text).toContain('<a href="/guarantees" aria-current="page">Guarantees</a>');
      expect(empty.text).toContain('<p id="no-run">No verify run is on record for this store.');
      expect(empty.text).toContain('<td><code>stale_lease</code></td>');
      const { id } = await h.store.jobEnqueue({ job: { name: 'work', payload: 1 } });
      const clean = await verifyHistory(h.store);
      await recordVerifyRun(h.store, clean, { actor: 'ops', startedAt: new Date() });
      const one = await browser.get('/guarantees');
      expect(one.text).toMatch(/by <code>ops<\/code>, over the whole history: <span class="state state-succeeded">none broken<\/span>/);
      expect(one.text).toContain(`Checked 1 history entries of 1 jobs`);
      // A run that found a broken promise: its violation links the job.
      const broken = { ...clean, violationCount: 1, violations: [{ rule: 'two_outcomes' as const, jobId: id, entryIds: [1, 2], message: `Attempt 1 of job ${id} had an outcome already.` }] };
      await recordVerifyRun(h.store, broken, { actor: 'scheduled', startedAt: new Date() });
      const two = await browser.get('/guarantees');
      expect(two.text).toMatch(/by <code>scheduled<\/code>, over the whole history: <span class="state state-dead_lettered">1 broken<\/span>/);
      expect(two.text).toContain(`<td><code>two_outcomes</code></td><td><a class="id" href="/jobs/${id}">${id}</a></td><td>1, 2</td>`);
      expect([...two.text.matchAll(/<tr><td><time datetime/g)]).toHaveLength(2);
      // An audit entry of the action that is not a run's report is left out, not shown wrong.
      await h.store.auditAppend({ action: 'verify.run', target: 'by hand', detail: { note: 'not a report' } });
      expect([...(await browser.get('/guarantees')).text.matchAll(/<tr><td><time datetime/g)]).toHaveLength(2);
      expect((await browser.get('/guarantees/x')).status).toBe(404);
    });

    it('the batches page lists batches newest first, each with its progress and its callbacks linked with their states; the navigation leads there', async () => {
      expect((await browser.get('/')).text).toContain('<a href="/batches">Batches</a>');
      const empty = await browser.get('/batches');
      expect(empty.status).toBe(200);
      expect(empty.text).toContain('<a href="/batches" aria-current="page">Batches</a>');
      expect(empty.text).toContain('<td colspan="9">No batch is stored.</td>');
      const older = await enqueueBatch(h.store, 3);
      const newer = await enqueueBatch(h.store, 2, ['complete'], 'batch-2');
      const [done, failed] = older.jobs.map((job) => job.id);
      await endJobs(h.store, 'batch', [
        [done!, 'succeeded'],
        [failed!, 'dead_lettered'],
      ]);
      const page = await browser.get('/batches');
      const rows = [...page.text.matchAll(/<tr>\s*<td><a class="id" href="\/batches\/([0-9a-f-]{36})">[^<]+<\/a><\/td>([\s\S]*?)<\/tr>/g)];
      expect(rows.map((m) => m[1])).toEqual([newer.batchId, older.batchId]);
      const cells = (row: string) => [...row.matchAll(/<td class="num">(\d+)<\/td>/g)].map((m) => Number(m[1]));
      // Jobs, pending, succeeded, failed, cancelled.
      expect(cells(rows[1]![2]!)).toEqual([3, 1, 1, 1, 0]);
      expect(rows[1]![2]).toContain('<td>1 of 3 pending</td>');
      expect(cells(rows[0]![2]!)).toEqual([2, 2, 0, 0, 0]);
      const { onSuccess, onComplete, onFailure } = older.callbacks;
      // One job failed for good: onSuccess is cancelled at once, the other two wait for the last job.
      expect(rows[1]![2]).toContain(
        `<td><a href="/jobs/${onSuccess}">onSuccess</a> <span class="state state-cancelled">cancelled</span> <a href="/jobs/${onComplete}">onComplete</a> <span class="state state-awaiting_parents">awaiting parents</span> <a href="/jobs/${onFailure}">onFailure</a> <span class="state state-awaiting_parents">awaiting parents</span></td>`,
      );
      expect(rows[0]![2]).toContain(`<a href="/jobs/${newer.callbacks.onComplete}">onComplete</a>`);
      // Not refreshed live: each row counts a batch's jobs, fifty aggregates every five seconds.
      expect(page.text).toContain('<table id="batches">');
      expect(page.text).not.toContain('Older batches');
      // Ended: the last job succeeded, so onComplete and onFailure are due.
      await endJobs(h.store, 'batch', [[older.jobs[2]!.id, 'succeeded']]);
      const ended = [...(await browser.get('/batches')).text.matchAll(/<tr>\s*<td><a class="id" href="\/batches\/[^"]+">[^<]+<\/a><\/td>([\s\S]*?)<\/tr>/g)][1]![1]!;
      expect(ended).toContain('<td>ended</td>');
      expect(cells(ended)).toEqual([3, 0, 2, 1, 0]);
      expect(ended).toContain(`<a href="/jobs/${onFailure}">onFailure</a> <span class="state state-scheduled">scheduled</span>`);
    });

    it("a batch's page shows its counts, its failed jobs and its callbacks, each linked; an unknown batch is a 404 page, a malformed id a 400", async () => {
      const batch = await enqueueBatch(h.store, 4, ['success', 'failure']);
      const [a, b, c] = batch.jobs.map((job) => job.id);
      await endJobs(h.store, 'batch', [
        [a!, 'succeeded'],
        [c!, 'dead_lettered'],
        [b!, 'dead_lettered'],
      ]);
      const page = await browser.get(`/batches/${batch.batchId}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain(`<h1>Batch ${batch.batchId}</h1>`);
      expect(page.text).toContain('<a href="/batches" aria-current="page">Batches</a>');
      const fields = /<dl class="fields">([\s\S]*?)<\/dl>/.exec(page.text)![1]!;
      expect(fields).toContain(`<dt>Id</dt><dd><code>${batch.batchId}</code></dd>`);
      expect(fields).toContain('<dt>Progress</dt><dd>1 of 4 jobs still pending</dd>');
      for (const [label, value] of [['Jobs', 4], ['Pending', 1], ['Succeeded', 1], ['Failed', 2], ['Cancelled', 0]] as const) expect(fields).toContain(`<dt>${label}</dt><dd>${value}</dd>`);
      const written = (await h.store.jobBatch({ batchId: batch.batchId }))!.createdAt.toISOString();
      expect(fields).toContain(`<dt>Written</dt><dd><time datetime="${written}">`);
      // The failed jobs in id order, each linked to its page.
      const failed = /<ul class="failed">([\s\S]*?)<\/ul>/.exec(page.text)![1]!;
      expect(linkedJobIds(failed)).toEqual([b!, c!].sort());
      expect(failed).toContain(`<li><a class="id" href="/jobs/${b}">${b}</a></li>`);
      const callbacks = /<ul class="callbacks">([\s\S]*?)<\/ul>/.exec(page.text)![1]!;
      expect(callbacks).toBe(
        `<li><a href="/jobs/${batch.callbacks.onSuccess}">onSuccess</a> <span class="state state-cancelled">cancelled</span>: runs once every job of the batch succeeded, and is cancelled as soon as one fails for good or is cancelled.</li>` +
          `<li><a href="/jobs/${batch.callbacks.onFailure}">onFailure</a> <span class="state state-awaiting_parents">awaiting parents</span>: runs once every job of the batch ended and at least one did not succeed, and is cancelled when all succeeded.</li>`,
      );
      expect(page.text).toContain(`<a class="action" href="/batches/${batch.batchId}/cancel">Cancel batch</a>`);
      expect(page.text).toContain('<section id="batch" data-live>');
      // A batch with no failed job says so.
      const clean = await enqueueBatch(h.store, 1, ['complete'], 'batch-clean');
      expect((await browser.get(`/batches/${clean.batchId}`)).text).toMatch(/<h2>Failed jobs<\/h2><p>None\.<\/p>/);

      const missing = await browser.get('/batches/0190a5a0-0000-7000-8000-000000000001');
      expect(missing.status).toBe(404);
      expect(missing.text).toContain('<p class="problem">No batch with id 0190a5a0-0000-7000-8000-000000000001 is stored: it never existed, or retention deleted all of its jobs.</p>');
      // A job's id is not a batch's.
      expect((await browser.get(`/batches/${a}`)).status).toBe(404);
      for (const path of ['/batches/not-a-uuid', '/batches/not-a-uuid/cancel', '/batches?before=nope']) {
        const bad = await browser.get(path);
        expect({ path, status: bad.status }).toEqual({ path, status: 400 });
        expect(bad.text).toMatch(/<p class="problem">[^<]*must be a UUID, got [^<]*\.<\/p>/);
      }
      expect((await browser.get(`/batches/${batch.batchId}/pause`)).status).toBe(404);
      expect((await browser.get(`/batches/${batch.batchId}/cancel/now`)).status).toBe(404);
      expect((await browser.post(`/batches/${batch.batchId}/pause`)).status).toBe(404);
    });

    it('the job page shows the batch a job is part of, or which callback of it the job is and when that runs', async () => {
      const batch = await enqueueBatch(h.store, 2, ['complete', 'failure']);
      const link = `<a class="id" href="/batches/${batch.batchId}">${batch.batchId}</a>`;
      expect((await browser.get(`/jobs/${batch.jobs[0]!.id}`)).text).toContain(`<dt>Batch</dt><dd>${link}, one of its jobs</dd>`);
      expect((await browser.get(`/jobs/${batch.callbacks.onComplete}`)).text).toContain(
        `<dt>Batch</dt><dd>${link}, its <code>onComplete</code> callback: it runs once every job of the batch ended, however each ended</dd>`,
      );
      expect((await browser.get(`/jobs/${batch.callbacks.onFailure}`)).text).toContain(
        `<dt>Batch</dt><dd>${link}, its <code>onFailure</code> callback: it runs once every job of the batch ended and at least one did not succeed, and is cancelled when all succeeded</dd>`,
      );
      const { id: plain } = await h.store.jobEnqueue({ job: { name: 'plain', payload: {}, queue: 'other' } });
      expect((await browser.get(`/jobs/${plain}`)).text).not.toContain('<dt>Batch</dt>');
    });

    it('the schedules pages show the pattern, state and the next five fire times', async () => {
      const { schedule } = await h.store.scheduleUpsert({ schedule: { name: 'report', cron: '0 9 * * 1', timezone: 'Europe/Berlin', queue: 'reports' } });
      const list = await browser.get('/schedules');
      expect(list.text).toContain('<code>0 9 * * 1 (Europe/Berlin)</code>');
      const detail = await browser.get(`/schedules/${schedule.id}`);
      expect(detail.status).toBe(200);
      const times = [...detail.text.matchAll(/<li><time datetime="([^"]+)"/g)].map((match) => new Date(match[1]!).getTime());
      expect(times).toHaveLength(5);
      expect(times.every((time, i) => i === 0 || time - times[i - 1]! >= 6.9 * 86_400_000)).toBe(true);
      expect(times[0]).toBe(schedule.nextFireAt!.getTime());
      expect(detail.text).toContain('None stored: it has not fired yet');
      // Triggered twice: both occurrences are listed with their states, and a plain job of the same name is not.
      const first = await h.store.scheduleTrigger({ scheduleId: schedule.id });
      await h.advance(1_000);
      const second = await h.store.scheduleTrigger({ scheduleId: schedule.id });
      const plain = await h.store.jobEnqueue({ job: { name: 'report', payload: {}, queue: 'reports' } });
      const listed = /<table class="occurrences">([\s\S]*?)<\/table>/.exec((await browser.get(`/schedules/${schedule.id}`)).text)?.[1] ?? '';
      expect(linkedJobIds(listed)).toEqual([second.id, first.id]);
      expect(listed).not.toContain(plain.id);
      expect(listed).toContain('state-scheduled');
    });

    it('the limits page lists each limit and the audit page lists operator actions with their actor', async () => {
      await h.store.concurrencyLimitSet({ target: { key: 'tenant-7' }, max: 3, actor: 'ops-bot' });
      const { id } = await h.store.jobEnqueue({ job: { name: 'tenant.job', payload: {}, queue: 'mail', concurrencyKey: 'tenant-7' } });
      await h.store.jobClaim({ workerId: 'worker-3', limit: 1, queues: ['mail'], leaseMs: 30_000 });
      const limits = await browser.get('/limits');
      expect(limits.text).toMatch(/<td>key<\/td><td>tenant-7<\/td>\s*<td class="num">1 \/ 3<\/td>/);
      expect(limits.text).toContain(`<li><a href="/jobs/${id}">tenant.job</a> on worker-3, until`);
      const audit = await browser.get('/audit');
      expect(audit.text).toMatch(/<td>ops-bot<\/td><td><code>limit\.set<\/code><\/td><td>key:tenant-7<\/td><td><code>\{&quot;max&quot;:3\}<\/code><\/td>/);
    });

    it('the limits page lists each rate limit with its window, the queue page shows its rate, and the audit page the change', async () => {
      await h.store.rateLimitSet({ target: { queue: 'mail' }, rate: { max: 2, perMs: 60_000 }, actor: 'ops-bot' });
      await h.store.rateLimitSet({ target: { key: 'tenant-7' }, rate: { max: 5, perMs: 1_500 } });
      for (let i = 0; i < 3; i += 1) await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
      expect(await h.store.jobClaim({ workerId: 'worker-3', limit: 3, queues: ['mail'], leaseMs: 30_000 })).toHaveLength(2);
      const limits = await browser.get('/limits');
      expect(limits.text).toContain('<td colspan="4">No concurrency limits are set.</td>');
      expect(limits.text).toMatch(/<td>key<\/td><td>tenant-7<\/td>\s*<td>5 starts per 1500 ms<\/td><td class="num">0 \/ 5<\/td><td>not full<\/td>/);
      expect(limits.text).toMatch(/<td>queue<\/td><td><a href="\/queues\/mail">mail<\/a><\/td>\s*<td>2 starts per 1 min<\/td><td class="num">2 \/ 2<\/td><td><time datetime=/);
      const queue = await browser.get('/queues/mail');
      expect(queue.text).toMatch(/<dt>Rate limit<\/dt><dd>2 starts per 1 min: 2 used in the last 1 min, full until <time datetime=/);
      expect((await browser.get('/queues/other')).text).toContain('<dt>Rate limit</dt><dd>none</dd>');
      const audit = await browser.get('/audit');
      expect(audit.text).toMatch(/<td>ops-bot<\/td><td><code>rate_limit\.set<\/code><\/td><td>queue:mail<\/td><td><code>\{&quot;rate&quot;:\{&quot;max&quot;:2,&quot;perMs&quot;:60000\}\}<\/code><\/td>/);
      await h.store.rateLimitSet({ target: { queue: 'mail' }, rate: null });
      await h.store.rateLimitSet({ target: { key: 'tenant-7' }, rate: null });
      expect((await browser.get('/limits')).text).toContain('<td colspan="5">No rate limits are set.</td>');
    });

    it('the workers page lists each node with its status, host, pid, version, queues and load', async () => {
      await h.store.nodeBeat({ id: 'node-a', host: 'box-1', pid: 101, version: '9.9.9', queues: ['mail', 'reports'], concurrency: 8, running: 3 });
      await h.store.nodeBeat({ id: 'node-b', host: 'box-2', pid: 202, version: '9.9.8', queues: ['default'], concurrency: 2, running: 1 });
      await h.store.nodeStop({ id: 'node-b' });
      const page = await browser.get('/workers');
      expect(page.status).toBe(200);
      const row = (id: string) => new RegExp(`<tr>\\s*<td><code>${id}</code></td>\\s*<td><span class="state state-node-(\\w+)">`).exec(page.text)?.[1];
      expect(row('node-a')).toBe('running');
      expect(row('node-b')).toBe('stopped');
      expect(page.text).toMatch(/<td>box-1<\/td>\s*<td class="num">101<\/td>\s*<td>9\.9\.9<\/td>\s*<td><a href="\/queues\/mail">mail<\/a>, <a href="\/queues\/reports">reports<\/a><\/td>\s*<td class="num">3 \/ 8<\/td>/);
      expect(page.text).toMatch(/<td>box-2<\/td>[\s\S]*?<td class="num">0 \/ 2<\/td>/);
    });

    it('the overview and a queue page chart the jobs finished in the last hour, and the queue page shows its limit and nodes', async () => {
      for (const queue of ['mail', 'mail', 'reports']) {
        const { id } = await h.store.jobEnqueue({ job: { name: 'work', payload: {}, queue } });
        const [job] = await h.store.jobClaim({ workerId: 'worker-1', limit: 1, queues: [queue], leaseMs: 30_000 });
        expect(job?.id).toBe(id);
        await h.store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded' }] });
      }
      await deadLetter(h.store, 'charge', 'declined');
      await h.store.concurrencyLimitSet({ target: { queue: 'mail' }, max: 5 });
      await h.store.nodeBeat({ id: 'node-a', host: 'box-1', pid: 101, version: '9.9.9', queues: ['mail'], concurrency: 8, running: 0 });
      // A minute on, they finished in the last whole minute.
      await h.advance(60_000);
      await h.store.nodeBeat({ id: 'node-a', host: 'box-1', pid: 101, version: '9.9.9', queues: ['mail'], concurrency: 8, running: 0 });
      const overview = await browser.get('/');
      expect(overview.text).toMatch(/<span class="value">4<\/span><span class="label">Finished last minute<\/span>/);
      expect(overview.text).toContain('All queues: 4 finished in the last hour,');
      expect(overview.text).toMatch(/<span class="value">4<\/span><span class="label">Finished in the last hour<\/span>/);
      expect(overview.text).toMatch(/<span class="value">1<\/span><span class="label">Running nodes<\/span>/);
      const queue = await browser.get('/queues/mail');
      expect(queue.status).toBe(200);
      expect(queue.text).toContain('Queue mail: 2 finished in the last hour');
      expect(queue.text).toContain('0 of 5 slots held');
      expect(queue.text).toContain('<code>node-a</code>');
      expect((await browser.get('/queues/reports')).text).toContain('<strong>none</strong>: its jobs wait until a node that claims from it starts');
    });

    it('issue 36 item 4: the overview and a queue page say what becomes of a job that succeeds, from the running nodes\' finish modes', async () => {
      const kept = (text: string) => /<p id="kept" data-live>([^<]*)<\/p>/.exec(text)?.[1];
      const queueKept = (text: string) => /<dt>Jobs that succeed<\/dt><dd id="kept">([^<]*)<\/dd>/.exec(text)?.[1];
      expect(kept((await browser.get('/')).text)).toBe('No node is running, so none says what becomes of a job that succeeds.');
      await h.store.nodeBeat({ id: 'node-a', host: 'box', pid: 7, version: '1.0.0', queues: ['mail'], concurrency: 4, running: 0 });
      expect(kept((await browser.get('/')).text)).toBe('A job that succeeds is kept, with its history, until retention deletes it (finish: keep on every running node).');
      expect(queueKept((await browser.get('/queues/mail')).text)).toMatch(/^A job that succeeds is kept/);

      // A store under the lean finish: its node says so, and its successes are in no count or chart.
      const lean = await target.open({ finish: 'lean' });
      const served = await serveDashboard(lean.store);
      try {
        await lean.store.nodeBeat({ id: 'node-lean', host: 'box', pid: 8, version: '1.0.0', queues: ['mail'], concurrency: 4, running: 0 });
        const { id } = await lean.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
        await lean.store.jobClaim({ workerId: 'node-lean', limit: 1, queues: ['mail'], leaseMs: 30_000 });
        await lean.store.jobCompleteMany({ workerId: 'node-lean', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded' }] });
        const sentence = 'A job that succeeds without output, dependants, unique key or an observer that needs it is deleted at once, with its history, so it is in no count or chart (finish: lean on every running node).';
        const overview = (await served.browser.get('/')).text;
        expect(kept(overview)).toBe(sentence);
        expect(overview).toMatch(/<span class="value">0<\/span><span class="label">Finished in the last hour<\/span>/);
        expect(queueKept((await served.browser.get('/queues/mail')).text)).toBe(sentence);
        expect((await served.browser.get(`/jobs/${id}`)).status).toBe(404);
      } finally {
        await served.server.close();
      }
    });

    it('the observers page shows each cursor lag, its oldest undelivered entry, its holder and its failures', async () => {
      await h.store.observerLease({ observer: 'audit-trail', workerId: 'node-x', leaseMs: 30_000 });
      await h.store.observerLease({ observer: 'billing-sync', workerId: 'node-y', leaseMs: 30_000 });
      await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
      await h.store.observerFail({ observer: 'billing-sync', workerId: 'node-y', error: 'webhook refused: 503', retryDelayMs: 60_000 });
      const page = await browser.get('/observers');
      expect(page.status).toBe(200);
      const row = (name: string) => new RegExp(`<td><code>${name}</code></td>([\\s\\S]*?)</tr>`).exec(page.text)?.[1] ?? '';
      expect(row('audit-trail')).toMatch(/^\s*<td class="num">1<\/td>\s*<td><time/);
      expect(row('audit-trail')).toContain('node-x, until');
      // Its failure count, the retry time, and the error.
      expect(row('billing-sync')).toMatch(/<td class="num">1<\/td>\s*<td><time[^>]*>[^<]*<\/time> <small>[^<]*<\/small><\/td>\s*<td class="error">webhook refused: 503<\/td>/);
    });

    it('an unknown job is a 404 page, a bad filter or address a 400 page, each with one sentence', async () => {
      const missing = await browser.get('/jobs/0190a5a0-0000-7000-8000-000000000001');
      expect(missing.status).toBe(404);
      expect(missing.text).toContain('<p class="problem">');
      expect((await browser.get('/jobs?state=sleeping')).status).toBe(400);
      expect((await browser.get('/jobs/not-a-uuid')).status).toBe(400);
      expect((await browser.get('/jobs/%E0%A4%A')).status).toBe(400);
      expect((await browser.get('/no/such/page')).status).toBe(404);
    });
  });

  describe('bounded pages (issue 35 item 9)', () => boundedPageCases(() => ({ h, browser })));
  describe('polish (issue 35 item 22)', () => polishCases(() => ({ h, browser })));

  describe('why is this job not running', () => {
    /** The reasons section of a job's page, as its list items' text. */
    async function reasons(jobId: string): Promise<string> {
      const page = await browser.get(`/jobs/${jobId}`);
      expect(page.status).toBe(200);
      return /<ul class="reasons">([\s\S]*?)<\/section>/.exec(page.text)?.[1] ?? '(no reasons section)';
    }

    it('a due job that nothing holds back is ready for the next claim', async () => {
      await h.store.nodeBeat({ id: 'node-a', host: 'box', pid: 7, version: '1.0.0', queues: ['mail', 'default'], concurrency: 4, running: 0 });
      const { id } = await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
      const text = await reasons(id);
      expect(text).toContain('It is due and nothing holds it back: the next claim by a worker serving queue <strong>mail</strong> takes it.');
      expect(text).not.toContain('No running worker');
    });

    it('no running worker serves its queue: none registered, one for other queues only, or one that stopped', async () => {
      const { id } = await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
      const none = 'No running worker serves its queue <strong>mail</strong>';
      expect(await reasons(id)).toContain(none);
      await h.store.nodeBeat({ id: 'node-b', host: 'box', pid: 8, version: '1.0.0', queues: ['reports'], concurrency: 1, running: 0 });
      expect(await reasons(id)).toContain(none);
      await h.store.nodeBeat({ id: 'node-c', host: 'box', pid: 9, version: '1.0.0', queues: ['mail'], concurrency: 1, running: 0 });
      expect(await reasons(id)).not.toContain(none);
      await h.store.nodeStop({ id: 'node-c' });
      expect(await reasons(id)).toContain(none);
    });

    it('its queue is paused', async () => {
      await h.store.nodeBeat({ id: 'node-a', host: 'box', pid: 7, version: '1.0.0', queues: ['mail'], concurrency: 4, running: 0 });
      const { id } = await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
      await h.store.queuePause({ queue: 'mail' });
      const text = await reasons(id);
      expect(text).toContain('Its queue <strong>mail</strong> is paused');
      expect(text).not.toContain('nothing holds it back');
    });

    it('the concurrency limit of its queue or its key is full, naming the holders', async () => {
      await h.store.concurrencyLimitSet({ target: { queue: 'lim' }, max: 1 });
      await h.store.concurrencyLimitSet({ target: { key: 'tenant-1' }, max: 1 });
      const first = await h.store.jobEnqueue({ job: { name: 'first', payload: {}, queue: 'lim' } });
      const second = await h.store.jobEnqueue({ job: { name: 'second', payload: {}, queue: 'lim' } });
      const keyed = await h.store.jobEnqueue({ job: { name: 'keyed.first', payload: {}, queue: 'keys', concurrencyKey: 'tenant-1' } });
      const keyedWaiting = await h.store.jobEnqueue({ job: { name: 'keyed.second', payload: {}, queue: 'keys', concurrencyKey: 'tenant-1' } });
      expect((await h.store.jobClaim({ workerId: 'worker-7', limit: 5, queues: ['lim', 'keys'], leaseMs: 30_000 })).map((job) => job.id).sort()).toEqual([first.id, keyed.id].sort());
      const byQueue = await reasons(second.id);
      expect(byQueue).toContain('The concurrency limit of queue <strong>lim</strong> is full: 1 of 1 slots are held by');
      expect(byQueue).toContain(`<a href="/jobs/${first.id}">first</a> on worker-7`);
      const byKey = await reasons(keyedWaiting.id);
      expect(byKey).toContain('The concurrency limit of key <strong>tenant-1</strong> is full: 1 of 1 slots are held by');
      expect(byKey).toContain(`<a href="/jobs/${keyed.id}">keyed.first</a> on worker-7`);
    });

    it('the rate limit of its queue or its key is reached, until when, and not once its window frees', async () => {
      await h.store.nodeBeat({ id: 'node-a', host: 'box', pid: 7, version: '1.0.0', queues: ['rl', 'keys'], concurrency: 4, running: 0 });
      await h.store.rateLimitSet({ target: { queue: 'rl' }, rate: { max: 1, perMs: 60_000 } });
      await h.store.rateLimitSet({ target: { key: 'tenant-1' }, rate: { max: 1, perMs: 30_000 } });
      const first = await h.store.jobEnqueue({ job: { name: 'first', payload: {}, queue: 'rl' } });
      const second = await h.store.jobEnqueue({ job: { name: 'second', payload: {}, queue: 'rl' } });
      const keyed = await h.store.jobEnqueue({ job: { name: 'keyed.first', payload: {}, queue: 'keys', concurrencyKey: 'tenant-1' } });
      const keyedWaiting = await h.store.jobEnqueue({ job: { name: 'keyed.second', payload: {}, queue: 'keys', concurrencyKey: 'tenant-1' } });
      expect((await h.store.jobClaim({ workerId: 'worker-7', limit: 5, queues: ['rl', 'keys'], leaseMs: 600_000 })).map((job) => job.id).sort()).toEqual([first.id, keyed.id].sort());
      const queueFull = (await h.store.rateLimitStatus({ target: { queue: 'rl' } }))!.fullUntil!;
      const keyFull = (await h.store.rateLimitStatus({ target: { key: 'tenant-1' } }))!.fullUntil!;
      const byQueue = await reasons(second.id);
      expect(byQueue).toContain(`The rate limit of queue <strong>rl</strong> is reached until <time datetime="${queueFull.toISOString()}">`);
      expect(byQueue).toContain('it allows 1 start per 1 min, all used, so claims pass its jobs over until then.');
      expect(byQueue).not.toContain('nothing holds it back');
      const byKey = await reasons(keyedWaiting.id);
      expect(byKey).toContain(`The rate limit of key <strong>tenant-1</strong> is reached until <time datetime="${keyFull.toISOString()}">`);
      expect(byKey).toContain('it allows 1 start per 30 s');
      // The running job is leased, not rate limited: a reason is about what holds a waiting job back.
      expect(await reasons(first.id)).not.toContain('rate limit');
      // A job due before the window frees is held by it then; one due after it is not.
      const soon = await h.store.jobEnqueue({ job: { name: 'soon', payload: {}, queue: 'rl', delayMs: 10_000 } });
      const late = await h.store.jobEnqueue({ job: { name: 'late', payload: {}, queue: 'rl', delayMs: 120_000 } });
      expect(await reasons(soon.id)).toContain('The rate limit of queue <strong>rl</strong> is reached until');
      expect(await reasons(late.id)).toContain('Its run time is in the future');
      expect(await reasons(late.id)).not.toContain('rate limit');
      await h.advance(30_000);
      await h.store.nodeBeat({ id: 'node-a', host: 'box', pid: 7, version: '1.0.0', queues: ['rl', 'keys'], concurrency: 4, running: 0 });
      expect(await reasons(keyedWaiting.id)).toContain('It is due and nothing holds it back');
      expect(await reasons(second.id)).toContain('The rate limit of queue <strong>rl</strong> is reached until');
    });

    it('it awaits its parents, n of m open, naming them, and the job pages link both ways', async () => {
      const done = await h.store.jobEnqueue({ job: { name: 'parent.done', payload: {}, queue: 'p' } });
      const open = await h.store.jobEnqueue({ job: { name: 'parent.open', payload: {}, queue: 'p2' } });
      const child = await h.store.jobEnqueue({ job: { name: 'child', payload: {}, queue: 'c', dependsOn: [done.id, open.id] } });
      await h.store.jobClaim({ workerId: 'worker-1', limit: 1, queues: ['p'], leaseMs: 30_000 });
      await h.store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId: done.id, attempt: 1, kind: 'succeeded' }] });
      const text = await reasons(child.id);
      expect(text).toContain('It awaits its parents: 1 of 2 parents are still open');
      expect(text).toContain(`<a href="/jobs/${open.id}">parent.open</a>`);
      expect(text).not.toContain(`/jobs/${done.id}`);
      const parentPage = await browser.get(`/jobs/${open.id}`);
      expect(parentPage.text).toMatch(new RegExp(`<h3>Dependants</h3><ul class="edges"><li><a href="/jobs/${child.id}">child</a>`));
    });

    it('its run time is in the future, or it waits for a retry until when', async () => {
      const later = await h.store.jobEnqueue({ job: { name: 'later', payload: {}, queue: 'mail', delayMs: 3_600_000 } });
      expect(await reasons(later.id)).toContain('Its run time is in the future:');
      const flaky = await h.store.jobEnqueue({ job: { name: 'flaky', payload: {}, queue: 'retry', maxAttempts: 3 } });
      await h.store.jobClaim({ workerId: 'worker-1', limit: 1, queues: ['retry'], leaseMs: 30_000 });
      await h.store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId: flaky.id, attempt: 1, kind: 'failed', error: 'boom', retryDelayMs: 600_000 }] });
      const text = await reasons(flaky.id);
      expect(text).toContain('It waits for a retry until');
      expect(text).toContain('attempt 1 failed with <span class="error">boom</span>');
    });

    it('issue 39 item 5: its handler snoozed it, until when, and how often; the job shows its snoozes', async () => {
      const polled = await h.store.jobEnqueue({ job: { name: 'poll', payload: {}, queue: 'snooze', maxAttempts: 3 } });
      await h.store.jobClaim({ workerId: 'worker-1', limit: 1, queues: ['snooze'], leaseMs: 30_000 });
      await h.store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId: polled.id, attempt: 1, kind: 'snoozed', delayMs: 600_000 }] });
      const text = await reasons(polled.id);
      expect(text).toContain('Its handler snoozed attempt 1: it runs again at');
      expect(text).toContain('this job has snoozed 1 time.');
      expect(text).not.toContain('waits for a retry');
      const page = await browser.get(`/jobs/${polled.id}`);
      expect(page.text).toMatch(/<dt>Attempt<\/dt><dd>1 of 4<\/dd>/);
      expect(page.text).toMatch(/<dt>Snoozes<\/dt><dd>1 \(each added one attempt\)<\/dd>/);
      // Running it now cuts the snooze short; it has spent no attempt.
      const ask = await browser.get(`/jobs/${polled.id}/run-now`);
      expect(ask.text).toContain('It becomes due now instead of when its snooze ends.');
    });

    it('a debounced job runs at its run time unless its key is enqueued again, no later than its latest run; the job page shows the window', async () => {
      const debounce = { key: 'digest-42', windowMs: 60_000, maxDelayMs: 150_000 };
      const first = await h.store.jobEnqueue({ job: { name: 'digest', payload: 1, queue: 'debounce', debounce } });
      await h.advance(30_000);
      expect(await h.store.jobEnqueue({ job: { name: 'digest', payload: 2, queue: 'debounce', debounce } })).toEqual({ id: first.id, created: false, deduplicated: 'debounced' });
      const pushed = (await h.store.jobGet({ jobId: first.id }))!;
      const endsAt = pushed.window!.endsAt.toISOString();
      expect(pushed.window).toMatchObject({ kind: 'debounce', key: 'digest-42' });
      expect(pushed.runAt.getTime()).toBeLessThan(pushed.window!.endsAt.getTime());
      const text = await reasons(first.id);
      expect(text).toContain(`It is debounced: it runs at <time datetime="${pushed.runAt.toISOString()}">`);
      expect(text).toContain(`unless another enqueue with key <strong>digest-42</strong> pushes it later, and no later than <time datetime="${endsAt}">`);
      expect(text).not.toContain('Its run time is in the future');
      const page = await browser.get(`/jobs/${first.id}`);
      expect(page.text).toContain(`<dt>Debounce</dt><dd>key <code>digest-42</code>, latest run <time datetime="${endsAt}">`);
      expect(page.text).not.toContain('it takes no more enqueues of its key');
      expect(page.text).not.toContain('<dt>Throttle</dt>');
      // Run now makes it due, but it stays debounced until a worker claims it.
      expect((await browser.get(`/jobs/${first.id}/run-now`)).text).toContain('Until a worker claims it, an enqueue with its debounce key still replaces its payload and pushes it later.');
      // Pushed as far as its window goes: another enqueue replaces the payload, not the run time.
      await h.advance(100_000);
      await h.store.jobEnqueue({ job: { name: 'digest', payload: 3, queue: 'debounce', debounce } });
      const capped = (await h.store.jobGet({ jobId: first.id }))!;
      expect(capped.runAt.toISOString()).toBe(capped.window!.endsAt.toISOString());
      const last = await reasons(first.id);
      expect(last).toContain(`It is debounced and has reached its latest run time: it runs at <time datetime="${capped.runAt.toISOString()}">`);
      expect(last).toContain('Another enqueue with key <strong>digest-42</strong> replaces its payload but cannot push it later.');
      // Once claimed it takes no more enqueues of its key, and says so.
      await h.advance(60_000);
      expect((await h.store.jobClaim({ workerId: 'worker-1', limit: 1, queues: ['debounce'], leaseMs: 30_000 })).map((job) => job.id)).toEqual([first.id]);
      const started = await browser.get(`/jobs/${first.id}`);
      expect(started.text).toMatch(/<dt>Debounce<\/dt><dd>key <code>digest-42<\/code>, latest run <time datetime="[^"]+">[^<]+<\/time> <small>[^<]+<\/small>; it takes no more enqueues of its key<\/dd>/);
      expect(await reasons(first.id)).not.toContain('debounced');
      expect((await h.store.jobEnqueue({ job: { name: 'digest', payload: 4, queue: 'debounce', debounce } })).created).toBe(true);
    });

    it('a throttle job shows its key and until when it drops enqueues, then that it dropped them; the window does not hold the job itself back', async () => {
      const throttle = { key: 'acct-7', windowMs: 600_000 };
      const opened = await h.store.jobEnqueue({ job: { name: 'sync', payload: 1, queue: 'throttle', throttle } });
      expect(await h.store.jobEnqueue({ job: { name: 'sync', payload: 2, queue: 'throttle', throttle } })).toEqual({ id: opened.id, created: false, deduplicated: 'throttled' });
      const endsAt = (await h.store.jobGet({ jobId: opened.id }))!.window!.endsAt.toISOString();
      const page = await browser.get(`/jobs/${opened.id}`);
      expect(page.text).toContain(`<dt>Throttle</dt><dd>key <code>acct-7</code>, drops enqueues until <time datetime="${endsAt}">`);
      expect(page.text).not.toContain('<dt>Debounce</dt>');
      const text = await reasons(opened.id);
      expect(text).not.toContain('debounced');
      expect(text).not.toContain('Its run time is in the future');
      await h.advance(600_000);
      const ended = await browser.get(`/jobs/${opened.id}`);
      expect(ended.text).toMatch(/<dt>Throttle<\/dt><dd>key <code>acct-7<\/code>, dropped enqueues until <time datetime="[^"]+">/);
      // A job without a window shows neither row.
      const plain = await h.store.jobEnqueue({ job: { name: 'sync', payload: 3, queue: 'throttle', delayMs: 60_000 } });
      const plainPage = await browser.get(`/jobs/${plain.id}`);
      expect(plainPage.text).not.toMatch(/<dt>(Debounce|Throttle)<\/dt>/);
      expect(await reasons(plain.id)).toContain('Its run time is in the future');
    });

    describe('a batch', () => {
      const badge = (state: string) => `<span class="state state-${state}">${state.replace(/_/g, ' ')}</span>`;

      it("a callback waits for the batch's jobs to end, n of m still pending, and says when it runs", async () => {
        const batch = await enqueueBatch(h.store, 3);
        const link = `<a class="id" href="/batches/${batch.batchId}">${batch.batchId}</a>`;
        const complete = await reasons(batch.callbacks.onComplete!);
        expect(complete).toContain(`It is the <code>onComplete</code> callback of batch ${link}: it waits for the batch's jobs to end, 3 of 3 still pending. It runs once every one of them ended, however each ended.`);
        // Its parents are the batch's jobs: the counts say it, not a list of up to 10,000 parents.
        expect(complete).not.toContain('It awaits its parents');
        expect(await reasons(batch.callbacks.onSuccess!)).toContain(
          `It is the <code>onSuccess</code> callback of batch ${link}: it waits for the batch's jobs to end, 3 of 3 still pending. It runs once every one of them succeeded, and is cancelled as soon as one fails for good or is cancelled.`,
        );
        expect(await reasons(batch.callbacks.onFailure!)).toContain('It runs once every one of them ended if at least one did not succeed (0 so far), and is cancelled if all succeed.');
        await endJobs(h.store, 'batch', [
          [batch.jobs[0]!.id, 'succeeded'],
          [batch.jobs[1]!.id, 'dead_lettered'],
        ]);
        expect(await reasons(batch.callbacks.onComplete!)).toContain("it waits for the batch's jobs to end, 1 of 3 still pending.");
        expect(await reasons(batch.callbacks.onFailure!)).toContain('1 of 3 still pending. It runs once every one of them ended if at least one did not succeed (1 so far)');
        // onSuccess was cancelled by the failure: an ended job that says nothing more than its error.
        const cancelled = await browser.get(`/jobs/${batch.callbacks.onSuccess}`);
        expect(cancelled.text).toContain(`<dt>State</dt><dd>${badge('cancelled')}</dd>`);
        expect(cancelled.text).not.toContain('Why is this job not running?');
        // A job of the batch gives the usual reasons.
        expect(await reasons(batch.jobs[2]!.id)).toContain('Worker <strong>worker-1</strong> runs it');
        // Once the batch ended, the callbacks are due and give the usual reasons.
        await endJobs(h.store, 'batch', [[batch.jobs[2]!.id, 'succeeded']]);
        const due = await reasons(batch.callbacks.onComplete!);
        expect(due).not.toContain('callback of batch');
        expect(due).toContain('No running worker serves its queue <strong>batch-callbacks</strong>');
      });

      it("an onFailure callback, or an on_failure job, whose parents all succeeded is cancelled, and its page says why it will not run", async () => {
        const batch = await enqueueBatch(h.store, 2, ['failure', 'complete']);
        await endJobs(h.store, 'batch', batch.jobs.map((job) => [job.id, 'succeeded'] as const));
        const callback = await h.store.jobGet({ jobId: batch.callbacks.onFailure! });
        expect(callback).toMatchObject({ state: 'cancelled', dependencyMode: 'on_failure', lastError: ALL_PARENTS_SUCCEEDED });
        const page = await browser.get(`/jobs/${callback!.id}`);
        const why = /<section class="why" id="why" data-live><h2>([^<]+)<\/h2><ul class="reasons">([\s\S]*?)<\/ul><\/section>/.exec(page.text);
        expect(why?.[1]).toBe('Why is this job not running?');
        expect(why?.[2]).toBe(
          `<li>It will not run: it is the <code>onFailure</code> callback of batch <a class="id" href="/batches/${batch.batchId}">${batch.batchId}</a>, which runs only when one of the batch's jobs does not succeed, and every one of them succeeded, so it was cancelled.</li>`,
        );
        expect(page.text).toContain(ALL_PARENTS_SUCCEEDED);
        // A plain on_failure dependant says the same of its parents.
        const parent = await h.store.jobEnqueue({ job: { name: 'report.build', payload: {}, queue: 'plain' } });
        const { id: onFailure } = await h.store.jobEnqueue({ job: { name: 'report.alert', payload: {}, queue: 'plain-alerts', dependsOn: [parent.id], dependencyMode: 'on_failure' } });
        await endJobs(h.store, 'plain', [[parent.id, 'succeeded']]);
        expect((await h.store.jobGet({ jobId: onFailure }))!.state).toBe('cancelled');
        expect(await reasons(onFailure)).toBe(
          '<li>It will not run: it waits <code>on_failure</code>, so it runs only when one of its parents does not succeed, and every one of them succeeded, so it was cancelled.</li></ul>',
        );
        // Cancelled otherwise (by an operator), it gives no reason.
        const other = await h.store.jobEnqueue({ job: { name: 'report.build', payload: {}, queue: 'plain' } });
        const { id: byHand } = await h.store.jobEnqueue({ job: { name: 'report.alert', payload: {}, queue: 'plain-alerts', dependsOn: [other.id], dependencyMode: 'on_failure' } });
        await h.store.jobCancel({ jobId: byHand });
        expect((await browser.get(`/jobs/${byHand}`)).text).not.toContain('Why is this job not running?');
      });
    });

    describe('a job of a sequence', () => {
      const badge = (state: string) => `<span class="state state-${state}">${state.replace(/_/g, ' ')}</span>`;

      it('waits behind the job before it, named and linked with its state; the job page shows the sequence and the job it runs after', async () => {
        const first = await h.store.jobEnqueue({ job: { name: 'acct.open', payload: {}, queue: 'ledger', sequence: { key: 'acct-1' } } });
        const second = await h.store.jobEnqueue({ job: { name: 'acct.deposit', payload: {}, queue: 'other', sequence: { key: 'acct-1', afterFailure: 'continue' } } });
        const text = await reasons(second.id);
        expect(text).toContain(`It waits behind job <a href="/jobs/${first.id}">acct.open</a> ${badge('scheduled')} of sequence <strong>acct-1</strong>: the jobs of a sequence run one at a time, in enqueue order, and this one runs after that job.`);
        // Its only parent is the sequence's: the dependency wording is not used for it.
        expect(text).not.toContain('It awaits its parents');
        const page = await browser.get(`/jobs/${second.id}`);
        expect(page.text).toContain(
          `<dt>Sequence</dt><dd>key <code>acct-1</code>, runs after <a href="/jobs/${first.id}">acct.open</a> ${badge('scheduled')}; afterFailure <code>continue</code>: if the job before it fails for good, it runs anyway</dd>`,
        );
        expect(page.text).toMatch(new RegExp(`<h3>Parents</h3><ul class="edges"><li><a href="/jobs/${first.id}">acct.open</a> <span[^>]*>scheduled</span> <small>open, sequence order</small>`));
        const firstPage = await browser.get(`/jobs/${first.id}`);
        expect(firstPage.text).toContain('<dt>Sequence</dt><dd>key <code>acct-1</code>, no job before it is stored; afterFailure <code>block</code>: if the job before it fails for good, it waits for an operator</dd>');
        expect(firstPage.text).toMatch(new RegExp(`<h3>Dependants</h3><ul class="edges"><li><a href="/jobs/${second.id}">acct.deposit</a> <span[^>]*>awaiting parents</span> <small>open, sequence order</small>`));
        // Running, the job before it shows so.
        expect((await h.store.jobClaim({ workerId: 'worker-1', limit: 1, queues: ['ledger'], leaseMs: 30_000 })).map((job) => job.id)).toEqual([first.id]);
        expect(await reasons(second.id)).toContain(`It waits behind job <a href="/jobs/${first.id}">acct.open</a> ${badge('running')} of sequence <strong>acct-1</strong>`);
        // A job without a sequence shows no row.
        const plain = await h.store.jobEnqueue({ job: { name: 'plain', payload: {}, queue: 'ledger', delayMs: 60_000 } });
        expect((await browser.get(`/jobs/${plain.id}`)).text).not.toContain('<dt>Sequence</dt>');
      });

      it('with dependsOn parents too, says both: its turn in the sequence, and its other parents in the dependency wording', async () => {
        const parent = await h.store.jobEnqueue({ job: { name: 'report.fetch', payload: {}, queue: 'p' } });
        const first = await h.store.jobEnqueue({ job: { name: 'acct.open', payload: {}, queue: 'ledger', sequence: { key: 'acct-2' } } });
        const both = await h.store.jobEnqueue({ job: { name: 'acct.report', payload: {}, queue: 'ledger', sequence: { key: 'acct-2' }, dependsOn: [parent.id] } });
        const text = await reasons(both.id);
        expect(text).toContain(`It waits behind job <a href="/jobs/${first.id}">acct.open</a> ${badge('scheduled')} of sequence <strong>acct-2</strong>`);
        expect(text).toContain('It awaits its parents: 1 of 1 parent is still open:');
        expect(text).toContain(`<a href="/jobs/${parent.id}">report.fetch</a>`);
        // The sequence's parent is not listed as a dependency.
        expect(/It awaits its parents[\s\S]*?<\/ul>/.exec(text)![0]).not.toContain(first.id);
        // Its turn come, only the dependency holds it.
        await h.store.jobClaim({ workerId: 'worker-1', limit: 1, queues: ['ledger'], leaseMs: 30_000 });
        await h.store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId: first.id, attempt: 1, kind: 'succeeded' }] });
        const after = await reasons(both.id);
        expect(after).not.toContain('of sequence');
        expect(after).toContain('It awaits its parents: 1 of 1 parent is still open:');
      });

      it('held by a dead letter before it, says the sequence is blocked by its failure and that replaying or cancelling it releases this job', async () => {
        const failed = await failInSequence(h.store, 'acct-3', 'ledger refused');
        const { id: waiting } = await h.store.jobEnqueue({ job: { name: 'acct.deposit', payload: {}, queue: 'ledger', sequence: { key: 'acct-3' } } });
        const text = await reasons(waiting);
        expect(text).toContain(
          `Sequence <strong>acct-3</strong> is blocked by the failure of job <a href="/jobs/${failed}">acct.open</a> ${badge('dead_lettered')}, the one before this job: its afterFailure is block, so it waits for an operator. Replaying that job releases this one once it succeeds; cancelling (discarding) it releases this one at once.`,
        );
        expect(text).toContain(`<a class="action" href="/jobs/${failed}/replay">Replay it</a> <a class="action" href="/jobs/${failed}/cancel">Cancel it</a>`);
        expect(text).not.toContain('It awaits its parents');
        expect((await browser.get(`/jobs/${failed}`)).text).toContain(
          `afterFailure <code>block</code>: if the job before it fails for good, it waits for an operator. Its failure holds back the next job, <a href="/jobs/${waiting}">acct.deposit</a> ${badge('awaiting_parents')}, until it is replayed and succeeds or is cancelled</dd>`,
        );
        // Its questions say what each does to the job behind it.
        expect((await browser.get(`/jobs/${failed}/replay`)).text).toContain('It becomes due now with its attempts reset to zero and its error cleared. A job waiting behind it in its sequence runs once it succeeds.');
        expect((await browser.get(`/jobs/${failed}/cancel`)).text).toContain('A job waiting behind it in its sequence is released at once.');
        // Replayed, it is the job this one waits behind again; once it succeeds, this one is due.
        expect((await browser.post(`/jobs/${failed}/replay`)).status).toBe(303);
        expect(await reasons(waiting)).toContain(`It waits behind job <a href="/jobs/${failed}">acct.open</a> ${badge('scheduled')} of sequence <strong>acct-3</strong>`);
        await h.store.jobClaim({ workerId: 'worker-1', limit: 1, queues: ['sequence-heads'], leaseMs: 30_000 });
        await h.store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId: failed, attempt: 1, kind: 'succeeded' }] });
        expect((await h.store.jobGet({ jobId: waiting }))!.state).toBe('scheduled');
        expect(await reasons(waiting)).not.toContain('sequence');

        // A quarantined job holds it the same way, and cancelling it releases the next at once.
        const quarantined = await failInSequence(h.store, 'acct-4', 'no handler', 'quarantined');
        const { id: behind } = await h.store.jobEnqueue({ job: { name: 'acct.deposit', payload: {}, queue: 'ledger', sequence: { key: 'acct-4' } } });
        expect(await reasons(behind)).toContain(`Sequence <strong>acct-4</strong> is blocked by the failure of job <a href="/jobs/${quarantined}">acct.open</a> ${badge('quarantined')}`);
        expect((await browser.post(`/jobs/${quarantined}/cancel`, [['cancelling', 'dead_letter']])).status).toBe(303);
        expect((await h.store.jobGet({ jobId: behind }))!.state).toBe('scheduled');
      });

      it('behind a job cancelled before its turn, says that job keeps its place and this one waits for the jobs before it', async () => {
        const ids: string[] = [];
        for (const name of ['acct.open', 'acct.deposit', 'acct.close']) ids.push((await h.store.jobEnqueue({ job: { name, payload: {}, queue: 'ledger', sequence: { key: 'acct-5' } } })).id);
        await h.store.jobClaim({ workerId: 'worker-1', limit: 1, queues: ['ledger'], leaseMs: 30_000 });
        expect((await browser.get(`/jobs/${ids[1]}/cancel`)).text).toContain('It keeps its place in its sequence: the job after it still waits for the jobs before this one.');
        expect((await browser.get(`/jobs/${ids[0]}/cancel`)).text).toContain('The next job of its sequence runs after it.');
        expect((await browser.post(`/jobs/${ids[1]}/cancel`, [['cancelling', 'work']])).status).toBe(303);
        const text = await reasons(ids[2]!);
        expect(text).toContain(
          `It waits behind job <a href="/jobs/${ids[1]}">acct.deposit</a> ${badge('cancelled')} of sequence <strong>acct-5</strong>, which ended before its turn came and keeps its place in line: this job's turn comes when the jobs before that one have had theirs.`,
        );
        expect(text).not.toContain('is blocked');
        await h.store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId: ids[0]!, attempt: 1, kind: 'succeeded' }] });
        expect((await h.store.jobGet({ jobId: ids[2]! }))!.state).toBe('scheduled');
      });
    });

    it('a worker holds its lease, and until when', async () => {
      const { id } = await h.store.jobEnqueue({ job: { name: 'long', payload: {}, queue: 'mail' } });
      await h.store.jobClaim({ workerId: 'worker-9', limit: 1, queues: ['mail'], leaseMs: 30_000 });
      const page = await browser.get(`/jobs/${id}`);
      expect(page.text).toContain('<h2>Who runs this job</h2>');
      expect(page.text).toContain('Worker <strong>worker-9</strong> runs it and holds its lease until');
    });
  });

  describe('actions', () => {
    it('cancel asks first, then cancels the job as the actor, in its history and the audit log', async () => {
      const { id } = await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
      const ask = await browser.get(`/jobs/${id}/cancel`);
      expect(ask.status).toBe(200);
      expect(ask.text).toContain(`<form class="confirm" method="post" action="/jobs/${id}/cancel">`);
      expect((await h.store.jobGet({ jobId: id }))!.state).toBe('scheduled');
      const done = await browser.post(`/jobs/${id}/cancel`);
      expect(done.status).toBe(303);
      expect(done.headers.get('location')).toBe(`/jobs/${id}?notice=job.cancelled`);
      expect((await h.store.jobGet({ jobId: id }))!.state).toBe('cancelled');
      expect((await h.store.auditList())[0]).toMatchObject({ actor: 'tester', action: 'job.cancel', target: id });
      expect((await h.store.jobHistory({ jobId: id })).map((entry) => entry.state)).toContain('cancelled');
    });

    it('the jobs page cancels a selection after asking: waiting jobs end cancelled, a running one is asked to stop', async () => {
      const waiting = (await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail', delayMs: 60_000 } })).id;
      const running = (await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } })).id;
      await h.store.jobClaim({ workerId: 'worker-1', limit: 1, queues: ['mail'], leaseMs: 30_000 });
      const done = await deadLetter(h.store, 'charge', 'declined');
      const list = await browser.get('/jobs');
      expect(list.text).toContain('<form method="post" action="/jobs/cancel">');
      expect(list.text).toContain('<button type="submit">Cancel selected</button>');
      for (const id of [waiting, running]) expect(list.text).toContain(`<input type="checkbox" name="id" value="${id}"`);
      expect(list.text).not.toContain(`<input type="checkbox" name="id" value="${done}"`);

      const ask = await browser.post('/jobs/cancel', [['id', waiting], ['id', running]]);
      expect(ask.status).toBe(200);
      expect(ask.text).toContain('Cancel 2 jobs?');
      expect((await h.store.jobGet({ jobId: waiting }))!.state).toBe('scheduled');
      const confirmed = await browser.post('/jobs/cancel', [['confirmed', '1'], ['id', waiting], ['id', running]]);
      expect(confirmed.headers.get('location')).toBe('/jobs?notice=jobs.cancelled');
      expect((await h.store.jobGet({ jobId: waiting }))!.state).toBe('cancelled');
      expect(await h.store.jobGet({ jobId: running })).toMatchObject({ state: 'running', cancelRequested: true });
      // A dead letter slipped into the selection is not discarded by it.
      const partial = await browser.post('/jobs/cancel', [['confirmed', '1'], ['id', done]]);
      expect(partial.headers.get('location')).toBe('/jobs?notice=jobs.cancel_partial');
      expect((await h.store.jobGet({ jobId: done }))!.state).toBe('dead_lettered');
    });

    it('replay and bulk replay make dead letters due again', async () => {
      const one = await deadLetter(h.store, 'charge', 'declined');
      const two = await deadLetter(h.store, 'charge', 'declined');
      const three = await deadLetter(h.store, 'charge', 'declined');
      expect((await browser.post(`/jobs/${one}/replay`)).status).toBe(303);
      expect((await h.store.jobGet({ jobId: one }))).toMatchObject({ state: 'scheduled', attempt: 0 });
      // The page's "Replay selected" POSTs the ticked ids, which asks first and changes nothing.
      const ask = await browser.post('/dead-letters/replay', [['id', two], ['id', three]]);
      expect(ask.status).toBe(200);
      expect(ask.text).toContain('Replay 2 dead letters?');
      expect(ask.text).toContain('<input type="hidden" name="confirmed" value="1">');
      expect((await h.store.jobGet({ jobId: two }))!.state).toBe('dead_lettered');
      const badId = await browser.post('/dead-letters/replay', [['confirmed', '1'], ['id', two], ['id', 'not-an-id']]);
      expect(badId.status).toBe(400);
      expect((await h.store.jobGet({ jobId: two }))!.state).toBe('dead_lettered');
      const bulk = await browser.post('/dead-letters/replay', [['confirmed', '1'], ['id', two], ['id', three], ['id', one]]);
      expect(bulk.headers.get('location')).toBe('/dead-letters?notice=bulk.replay_partial');
      for (const id of [two, three]) expect((await h.store.jobGet({ jobId: id }))!.state).toBe('scheduled');
      expect((await h.store.auditList()).filter((record) => record.action === 'job.replay')).toHaveLength(3);
    });

    it('bulk cancel discards a group of dead letters by its filter, or a selection, after asking', async () => {
      const declined = [await deadLetter(h.store, 'charge', 'declined'), await deadLetter(h.store, 'charge', 'declined')];
      const timeout = await deadLetter(h.store, 'charge', 'timeout');
      const list = await browser.get('/dead-letters');
      expect(list.text).toContain('href="/dead-letters/cancel?name=charge&amp;error=declined">Cancel these 2</a>');
      expect(list.text).toContain('formaction="/dead-letters/cancel">Cancel selected</button>');
      // The group's link asks first, naming each job, and changes nothing.
      const ask = await browser.get('/dead-letters/cancel?name=charge&error=declined');
      expect(ask.status).toBe(200);
      expect(ask.text).toContain('Cancel 2 dead letters?');
      expect(ask.text).toContain('can no longer be replayed');
      for (const id of declined) expect(ask.text).toContain(`<input type="hidden" name="id" value="${id}">`);
      expect((await h.store.jobListDeadLettered()).map((job) => job.id).sort()).toEqual([...declined, timeout].sort());

      const done = await browser.post('/dead-letters/cancel', [['confirmed', '1'], ...declined.map((id) => ['id', id] as [string, string])]);
      expect(done.headers.get('location')).toBe('/dead-letters?notice=bulk.cancelled');
      for (const id of declined) expect(await h.store.jobGet({ jobId: id })).toMatchObject({ state: 'cancelled', lastError: 'declined' });
      expect((await h.store.jobListDeadLettered()).map((job) => job.id)).toEqual([timeout]);
      expect((await h.store.auditList()).filter((record) => record.action === 'job.cancel' && record.actor === 'tester')).toHaveLength(2);

      // A selection with a job that left the list since is acted on in part, and says so.
      const partial = await browser.post('/dead-letters/cancel', [['confirmed', '1'], ['id', timeout], ['id', declined[0]!]]);
      expect(partial.headers.get('location')).toBe('/dead-letters?notice=bulk.cancel_partial');
      expect((await h.store.jobGet({ jobId: timeout }))!.state).toBe('cancelled');
      expect((await browser.get('/dead-letters?notice=bulk.cancel_partial')).text).toContain('had left the dead-letter list');
    });

    it('the page of a dead letter offers cancel beside replay, and cancelling it discards it', async () => {
      const id = await deadLetter(h.store, 'charge', 'declined');
      const page = await browser.get(`/jobs/${id}`);
      expect(page.text).toContain(`href="/jobs/${id}/replay"`);
      expect(page.text).toContain(`href="/jobs/${id}/cancel"`);
      expect((await browser.get(`/jobs/${id}/cancel`)).text).toContain('leaves the dead-letter list for good');
      expect((await browser.post(`/jobs/${id}/cancel`, [['cancelling', 'dead_letter']])).headers.get('location')).toBe(`/jobs/${id}?notice=job.cancelled`);
      expect((await h.store.jobGet({ jobId: id }))!.state).toBe('cancelled');
      expect((await h.store.auditList())[0]).toMatchObject({ action: 'job.cancel', target: id, detail: { outcome: 'cancelled', from: 'dead_lettered' } });
    });

    it('a confirmed cancel refuses a job that moved since its question: a discard does not cancel a replayed job', async () => {
      const id = await deadLetter(h.store, 'charge', 'declined');
      const ask = await browser.get(`/jobs/${id}/cancel`);
      expect(ask.text).toContain('<input type="hidden" name="cancelling" value="dead_letter">');
      await h.store.jobReplay({ jobId: id, actor: 'someone-else' });
      const late = await browser.post(`/jobs/${id}/cancel`, [['cancelling', 'dead_letter']]);
      expect(late.status).toBe(409);
      expect(late.text).toContain('is scheduled, not dead_lettered, quarantined or cancelled, so it was left as it is.');
      expect((await h.store.jobGet({ jobId: id }))!.state).toBe('scheduled');
      // Asked as stopping work, the same job is cancelled.
      expect((await browser.get(`/jobs/${id}/cancel`)).text).toContain('<input type="hidden" name="cancelling" value="work">');
      expect((await browser.post(`/jobs/${id}/cancel`, [['cancelling', 'work']])).status).toBe(303);
      expect((await h.store.jobGet({ jobId: id }))!.state).toBe('cancelled');
    });

    it('pauses and resumes a queue, and pauses, resumes and triggers a schedule', async () => {
      await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
      expect((await browser.post('/queues/mail/pause')).headers.get('location')).toBe('/?notice=queue.paused');
      expect((await h.store.queueList()).find((queue) => queue.name === 'mail')?.paused).toBe(true);
      expect((await browser.get('/')).text).toContain('href="/queues/mail/resume"');
      await browser.post('/queues/mail/resume');
      expect((await h.store.queueList()).find((queue) => queue.name === 'mail')?.paused).toBe(false);

      const { schedule } = await h.store.scheduleUpsert({ schedule: { name: 'report', everyMs: 3_600_000 } });
      await browser.post(`/schedules/${schedule.id}/pause`);
      expect((await h.store.scheduleGet({ scheduleId: schedule.id }))!.state).toBe('paused');
      await browser.post(`/schedules/${schedule.id}/resume`);
      expect((await h.store.scheduleGet({ scheduleId: schedule.id }))!.state).toBe('active');
      const before = (await h.store.jobListPage({ name: 'report' })).jobs.length;
      await browser.post(`/schedules/${schedule.id}/trigger`);
      expect((await h.store.jobListPage({ name: 'report' })).jobs.length).toBe(before + 1);
      expect((await h.store.auditList()).slice(0, 3).map((record) => record.action)).toEqual(['schedule.trigger', 'schedule.resume', 'schedule.pause']);
    });

    it('run now asks first, then makes a job that waits for its run time due, as the actor', async () => {
      const { id } = await h.store.jobEnqueue({ job: { name: 'report', payload: {}, queue: 'reports', delayMs: 3_600_000 } });
      expect((await browser.get(`/jobs/${id}`)).text).toContain(`href="/jobs/${id}/run-now">Run now</a>`);
      const ask = await browser.get(`/jobs/${id}/run-now`);
      expect(ask.text).toContain('It becomes due now instead of at its run time.');
      const done = await browser.post(`/jobs/${id}/run-now`);
      expect(done.headers.get('location')).toBe(`/jobs/${id}?notice=job.run_now`);
      expect((await h.store.jobClaim({ workerId: 'worker-1', limit: 1, queues: ['reports'], leaseMs: 30_000 })).map((job) => job.id)).toEqual([id]);
      expect((await h.store.auditList())[0]).toMatchObject({ actor: 'tester', action: 'job.run_now', target: id });
      expect((await browser.get(`/jobs/${id}/run-now`)).status).toBe(409);
    });

    it('the sequences page replays or cancels the failed job after asking, and comes back: replayed, the next job runs once it succeeds; cancelled, at once', async () => {
      const replayed = await failInSequence(h.store, 'acct-1');
      const { id: afterReplay } = await h.store.jobEnqueue({ job: { name: 'acct.deposit', payload: {}, queue: 'ledger', sequence: { key: 'acct-1' } } });
      const discarded = await failInSequence(h.store, 'acct-2');
      const { id: afterCancel } = await h.store.jobEnqueue({ job: { name: 'acct.deposit', payload: {}, queue: 'ledger', sequence: { key: 'acct-2' } } });
      // "Replay selected" POSTs the ticked ids, which asks first and changes nothing.
      const ask = await browser.post('/sequences/replay', [['id', replayed]]);
      expect(ask.status).toBe(200);
      expect(ask.text).toContain('Replay 1 job that blocks a sequence?');
      expect(ask.text).toContain('the job waiting behind it in its sequence runs once it succeeds');
      expect(ask.text).toContain('<form class="confirm" method="post" action="/sequences/replay">');
      expect(ask.text).toContain(`<input type="hidden" name="id" value="${replayed}">`);
      expect(ask.text).toContain('<a href="/sequences">Back</a>');
      expect((await h.store.jobGet({ jobId: replayed }))!.state).toBe('dead_lettered');
      const done = await browser.post('/sequences/replay', [['confirmed', '1'], ['id', replayed]]);
      expect(done.headers.get('location')).toBe('/sequences?notice=sequences.replayed');
      expect((await browser.get('/sequences?notice=sequences.replayed')).text).toContain('The selected jobs were replayed: each is due now, and the job behind it in its sequence runs once it succeeds.');
      expect(await h.store.jobGet({ jobId: replayed })).toMatchObject({ state: 'scheduled', attempt: 0 });
      expect((await h.store.jobGet({ jobId: afterReplay }))!.state).toBe('awaiting_parents');
      expect((await h.store.jobListBlockedSequences()).map((s) => s.key)).toEqual(['acct-2']);
      await h.store.jobClaim({ workerId: 'worker-1', limit: 1, queues: ['sequence-heads'], leaseMs: 30_000 });
      await h.store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId: replayed, attempt: 1, kind: 'succeeded' }] });
      expect((await h.store.jobGet({ jobId: afterReplay }))!.state).toBe('scheduled');

      // A row's Cancel asks about its one job, then discards it, which releases the next job.
      const question = await browser.get(`/sequences/cancel?id=${discarded}`);
      expect(question.text).toContain('Cancel 1 job that blocks a sequence?');
      expect(question.text).toContain('The job waiting behind it in its sequence is released at once.');
      expect(/<button type="submit" class="(\w+)">/.exec(question.text)?.[1]).toBe('danger');
      const cancelled = await browser.post('/sequences/cancel', [['confirmed', '1'], ['id', discarded]]);
      expect(cancelled.headers.get('location')).toBe('/sequences?notice=sequences.cancelled');
      expect(await h.store.jobGet({ jobId: discarded })).toMatchObject({ state: 'cancelled', lastError: 'ledger refused' });
      expect((await h.store.jobGet({ jobId: afterCancel }))!.state).toBe('scheduled');
      expect((await browser.get('/sequences')).text).toContain('No sequence is blocked.');
      expect((await h.store.auditList()).filter((record) => record.actor === 'tester').map((record) => [record.action, record.target])).toEqual([
        ['job.cancel', discarded],
        ['job.replay', replayed],
      ]);
      // Acting again on a job that left the list since is skipped, and says so.
      const again = await browser.post('/sequences/cancel', [['confirmed', '1'], ['id', discarded], ['id', replayed]]);
      expect(again.headers.get('location')).toBe('/sequences?notice=sequences.cancel_partial');
      expect((await h.store.jobGet({ jobId: replayed }))!.state).toBe('succeeded');
    });

    it("Cancel batch asks first, then cancels every job of the batch that has not ended, its callbacks first, each audited as the actor", async () => {
      const batch = await enqueueBatch(h.store, 3, ['complete', 'failure']);
      const [done, running, waiting] = batch.jobs.map((job) => job.id);
      // Two are claimed: one succeeds and one runs on; the third waits, scheduled.
      await h.store.jobClaim({ workerId: 'worker-1', limit: 2, queues: ['batch'], leaseMs: 600_000 });
      await h.store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId: done!, attempt: 1, kind: 'succeeded' }] });
      expect((await h.store.jobGet({ jobId: waiting! }))!.state).toBe('scheduled');
      const ask = await browser.get(`/batches/${batch.batchId}/cancel`);
      expect(ask.status).toBe(200);
      expect(ask.text).toContain('<h1>Cancel this batch?</h1>');
      expect(ask.text).toContain(`<form class="confirm" method="post" action="/batches/${batch.batchId}/cancel">`);
      expect(ask.text).toContain('Every job of the batch that has not ended is cancelled, its callbacks first, so no callback runs');
      expect(ask.text).toContain(`<li>batch <code>${batch.batchId}</code>: 2 of 3 jobs pending, 2 callbacks not ended</li>`);
      expect(ask.text).toContain(`<a href="/batches/${batch.batchId}">Back</a>`);
      expect(/<button type="submit" class="(\w+)">([^<]+)<\/button>/.exec(ask.text)?.slice(1)).toEqual(['danger', 'Cancel the batch']);
      expect((await h.store.jobGet({ jobId: waiting! }))!.state).toBe('scheduled');

      const done303 = await browser.post(`/batches/${batch.batchId}/cancel`);
      expect(done303.status).toBe(303);
      expect(done303.headers.get('location')).toBe(`/batches/${batch.batchId}?notice=batch.cancel_requested`);
      expect((await browser.get(`/batches/${batch.batchId}?notice=batch.cancel_requested`)).text).toContain('its running jobs were asked to stop; each ends cancelled when its attempt does.');
      expect((await h.store.jobGet({ jobId: waiting! }))!.state).toBe('cancelled');
      expect(await h.store.jobGet({ jobId: running! })).toMatchObject({ state: 'running', cancelRequested: true });
      expect((await h.store.jobGet({ jobId: done! }))!.state).toBe('succeeded');
      for (const callback of [batch.callbacks.onComplete!, batch.callbacks.onFailure!]) expect((await h.store.jobGet({ jobId: callback }))!.state).toBe('cancelled');
      // Each job's cancel is audited on its own, as the dashboard's actor: the callbacks first.
      const audited = (await h.store.auditList()).filter((record) => record.actor === 'tester' && record.action === 'job.cancel').map((record) => record.target).reverse();
      expect(audited.slice(0, 2).sort()).toEqual([batch.callbacks.onComplete!, batch.callbacks.onFailure!].sort());
      expect(audited.slice(2).sort()).toEqual([running!, waiting!].sort());
      // The running job ends cancelled when its worker sees the request; then nothing is left to cancel.
      await h.store.jobCompleteMany({ workerId: 'worker-1', outcomes: [{ jobId: running!, attempt: 1, kind: 'failed', error: 'aborted', retryDelayMs: 0 }] });
      expect((await h.store.jobGet({ jobId: running! }))!.state).toBe('cancelled');
      const ended = await browser.get(`/batches/${batch.batchId}`);
      expect(ended.text).not.toContain('Cancel batch');
      expect(ended.text).toContain('<dt>Progress</dt><dd>ended: no job of the batch is pending</dd>');
      const refused = await browser.get(`/batches/${batch.batchId}/cancel`);
      expect(refused.status).toBe(409);
      expect(refused.text).toContain('Every job and callback of this batch has ended, so there is nothing to cancel.');
      // Confirming again changes nothing, and says so.
      expect((await browser.post(`/batches/${batch.batchId}/cancel`)).headers.get('location')).toBe(`/batches/${batch.batchId}?notice=batch.nothing_to_cancel`);

      // A batch with only waiting jobs: all cancelled at once.
      const idle = await enqueueBatch(h.store, 2, ['success'], 'idle');
      expect((await browser.post(`/batches/${idle.batchId}/cancel`)).headers.get('location')).toBe(`/batches/${idle.batchId}?notice=batch.cancelled`);
      expect(await h.store.jobBatch({ batchId: idle.batchId })).toMatchObject({ pending: 0, cancelled: 2, callbacks: [{ kind: 'success', state: 'cancelled' }] });
      // An unknown batch is a 404, a malformed id a 400, and neither changes anything.
      const before = await h.snapshot();
      expect((await browser.post('/batches/0190a5a0-0000-7000-8000-000000000001/cancel')).status).toBe(404);
      expect((await browser.post('/batches/not-a-uuid/cancel')).status).toBe(400);
      expect(await h.snapshot()).toEqual(before);
    });

    it('an action the job state does not allow is refused with 409 and changes nothing', async () => {
      const { id } = await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
      expect((await browser.get(`/jobs/${id}/replay`)).status).toBe(409);
      const refused = await browser.post(`/jobs/${id}/replay`);
      expect(refused.status).toBe(409);
      expect((await h.store.jobGet({ jobId: id }))!.state).toBe('scheduled');
    });
  });

  describe('denials', () => {
    it('refuses a POST without the CSRF token, with a stale one, from another origin, or with no origin', async () => {
      const { id } = await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
      await browser.get('/');
      const before = await h.snapshot();
      const attempts = [
        () => fetch(`${browser.base}/jobs/${id}/cancel`, { method: 'POST', redirect: 'manual', headers: { origin: browser.base, 'content-type': 'application/x-www-form-urlencoded' }, body: '' }),
        () => browser.post(`/jobs/${id}/cancel`, [], { cookie: 'durable_scheduler_csrf=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }),
        () => browser.post(`/jobs/${id}/cancel`, [], { origin: 'http://evil.example' }),
        () => browser.post(`/jobs/${id}/cancel`, [], { origin: 'null' }),
        // A token of the right length in characters but not in bytes must be a refusal, not a failure.
        () => browser.post(`/jobs/${id}/cancel`, [['_csrf', 'é'.repeat(43)]], { cookie: `durable_scheduler_csrf=${'é'.repeat(43)}` }),
        () => fetch(`${browser.base}/jobs/${id}/cancel`, { method: 'POST', redirect: 'manual', headers: { cookie: `durable_scheduler_csrf=${browser.csrf}`, 'content-type': 'application/x-www-form-urlencoded' }, body: `_csrf=${browser.csrf}` }),
      ];
      for (const attempt of attempts) expect((await attempt()).status).toBe(403);
      expect(await h.snapshot()).toEqual(before);
      expect((await h.store.jobGet({ jobId: id }))!.state).toBe('scheduled');
    });

    it('read-only mode refuses every action on the server, draws no controls and hides payloads', async () => {
      await server.close();
      ({ server, browser } = await serveDashboard(h.store, { readOnly: true }));
      const id = await deadLetter(h.store, 'charge', 'declined', { card: 'SECRET-9' });
      await h.store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
      const before = await h.snapshot();
      for (const path of [`/jobs/${id}/replay`, `/jobs/${id}/cancel`, '/queues/mail/pause', '/dead-letters/replay', '/dead-letters/cancel', '/jobs/cancel', '/sequences/replay', '/sequences/cancel']) {
        expect((await browser.post(path, [['id', id]])).status).toBe(403);
        expect((await browser.get(path)).status).toBe(403);
      }
      expect(await h.snapshot()).toEqual(before);
      const page = await browser.get(`/jobs/${id}`);
      expect(page.text).toContain('read-only');
      expect(page.text).not.toMatch(/\/replay"|\/cancel"/);
      expect((await browser.get('/')).text).not.toContain('/queues/mail/pause');
      const jobs = (await browser.get('/jobs')).text;
      expect(jobs).not.toContain('type="checkbox"');
      expect(jobs).not.toContain('method="post"');
      await failInSequence(h.store, 'acct-1');
      const { id: held } = await h.store.jobEnqueue({ job: { name: 'acct.deposit', payload: {}, queue: 'ledger', sequence: { key: 'acct-1' } } });
      const sequences = (await browser.get('/sequences')).text;
      expect(sequences).toContain('<code>acct-1</code>');
      expect(sequences).not.toMatch(/type="checkbox"|method="post"|\/replay|\/cancel/);
      const heldPage = (await browser.get(`/jobs/${held}`)).text;
      expect(heldPage).toContain('Sequence <strong>acct-1</strong> is blocked');
      expect(heldPage).not.toMatch(/\/replay"|\/cancel"/);
      const reveal = await browser.get(`/jobs/${id}?reveal=payload`);
      expect(reveal.status).toBe(403);
      expect(reveal.text).not.toContain('SECRET-9');

      await server.close();
      ({ server, browser } = await serveDashboard(h.store, { readOnly: true, revealPayloadsWhenReadOnly: true }));
      expect((await browser.get(`/jobs/${id}?reveal=payload`)).text).toContain('SECRET-9');
    });

    it('read-only mode refuses Cancel batch on the server and draws no Cancel batch link', async () => {
      await server.close();
      ({ server, browser } = await serveDashboard(h.store, { readOnly: true }));
      const batch = await enqueueBatch(h.store, 2);
      const before = await h.snapshot();
      expect((await browser.get(`/batches/${batch.batchId}/cancel`)).status).toBe(403);
      expect((await browser.post(`/batches/${batch.batchId}/cancel`)).status).toBe(403);
      expect(await h.snapshot()).toEqual(before);
      const page = (await browser.get(`/batches/${batch.batchId}`)).text;
      expect(page).toContain('<dt>Pending</dt><dd>2</dd>');
      expect(page).not.toMatch(/\/cancel"|Cancel batch/);
      expect((await browser.get('/batches')).text).toContain(`href="/batches/${batch.batchId}"`);
    });

    it('every response carries a strict policy, no framing and no caching', async () => {
      for (const path of ['/', '/jobs', '/no-such-page', '/?notice=constructor', '/?notice=__proto__']) {
        const page = await browser.get(path);
        expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'; style-src 'self'/);
        expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
        expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.text).not.toContain('class="notice"');
        expect(page.headers.get('cache-control')).toBe('no-store');
        expect(page.text).not.toMatch(/<script>|<script [^>]*>[^<]|\son[a-z]+=/);
      }
    });
  });
}
