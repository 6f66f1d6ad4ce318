import { describe, expect, it } from '@jest/globals';
import type { JobRecord, JobState } from '../../lib/core/index.js';
import type { AuditRecord, HistoryEntry, JobStatus } from '../../lib/store/index.js';
import { checkInLogOrder } from '../../lib/verify/log-order-pass.js';
import { CONCURRENT_MARGINS, MAX_WAITING } from '../../lib/verify/stamp-margins.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const MIN = 60_000;

/** A store of hand-written log, rows and audit entries: the interleavings a real store makes only by chance, forced. */
class Log {
  readonly entries: HistoryEntry[] = [];
  readonly rows = new Map<
    string,
    { name: string; queue: string; key: string | null; uniqueKey: string | null; scheduleId: string | null; state: JobState; attempt: number; leasedUntil: Date | null }
  >();
  readonly audit: AuditRecord[] = [];

  job(id: string, key: string | null, queue = 'q', more: { uniqueKey?: string; scheduleId?: string; name?: string } = {}) {
    this.rows.set(id, { name: more.name ?? 'work', queue, key, uniqueKey: more.uniqueKey ?? null, scheduleId: more.scheduleId ?? null, state: 'scheduled', attempt: 0, leasedUntil: null });
  }

  /** Appends an entry (at `at` ms after T0) in log order; a start leases until `lease`. */
  entry(jobId: string, state: JobState, at: number, attempt: number, leaseUntil: number | null = null) {
    const id = this.entries.length + 1;
    this.entries.push({ id, position: String(id), jobId, name: this.rows.get(jobId)!.name, at: new Date(T0 + at), state, attempt, error: null, workerId: 'w', leaseUntil: leaseUntil === null ? null : new Date(T0 + leaseUntil) });
    const row = this.rows.get(jobId)!;
    row.state = state;
    row.attempt = attempt;
  }

  /** A running job's stored lease. */
  lease(jobId: string, until: number) {
    this.rows.get(jobId)!.leasedUntil = new Date(T0 + until);
  }

  change(action: string, target: string, detail: unknown, at: number) {
    this.audit.push({ id: this.audit.length + 1, at: new Date(T0 + at), actor: 'ops', action, target, detail });
  }

  serial = false;

  readonly store = {
    historyRead: async ({ after, limit }: { after?: string; limit: number }) => this.entries.slice(after === undefined ? 0 : Number(after), (after === undefined ? 0 : Number(after)) + limit),
    jobStatusMany: async ({ jobIds }: { jobIds: readonly string[] }) =>
      jobIds.flatMap((id) => {
        const row = this.rows.get(id);
        return row
          ? [{ id, queue: row.queue, concurrencyKey: row.key, uniqueKey: row.uniqueKey, scheduleId: row.scheduleId, scheduledFor: new Date(T0), state: row.state, attempt: row.attempt } as JobStatus]
          : [];
      }),
    jobGet: async ({ jobId }: { jobId: string }) => {
      const row = this.rows.get(jobId);
      return row ? ({ id: jobId, state: row.state, attempt: row.attempt, leasedUntil: row.leasedUntil } as JobRecord) : null;
    },
    auditList: async ({ action, limit, before }: { action?: string; limit?: number; before?: number }) =>
      this.audit
        .filter((e) => (action === undefined || e.action === action) && (before === undefined || e.id < before))
        .reverse()
        .slice(0, limit ?? 50),
  };

  check(range: { since?: number; until?: number } = {}, keyed = true) {
    const at = (ms: number | undefined) => (ms === undefined ? null : new Date(T0 + ms));
    const store = { ...this.store, capabilities: { serialWrites: this.serial } };
    return checkInLogOrder(store as never, { since: at(range.since), until: at(range.until), pageSize: 2 }, keyed);
  }
}

/** A log whose key `k` was capped at `max` an hour before T0. */
function capped(max: number | null, action = 'limit.set') {
  const log = new Log();
  log.change(action, 'key:k', { max }, -60 * MIN);
  return log;
}

describe('verify: concurrency limits judged from the log', () => {
  it('issue 40: a start while the cap is full is limit_exceeded; one after a job ended is not', async () => {
    const log = capped(1);
    for (const id of ['a', 'b', 'c']) log.job(id, 'k');
    log.entry('a', 'running', 0, 1, null);
    log.entry('b', 'running', 10_000, 1);
    log.entry('b', 'succeeded', 15_000, 1, 70_000);
    log.entry('a', 'succeeded', 20_000, 1, 60_000);
    log.entry('c', 'running', 30_000, 1);
    log.lease('c', 90_000);
    const found = await log.check();
    expect(found.violations.map((v) => [v.rule, v.jobId, v.entryIds])).toEqual([['limit_exceeded', 'b', [1, 2]]]);
    expect(found.violations[0]!.message).toBe('Job b started in entry 2 at 2030-01-01T00:00:10.000Z while 1 job already ran under key:k, whose limit was 1.');
    expect(found).toMatchObject({ capStarts: 3, rateStarts: 0, startsUnattributed: 0 });
    expect(found.timelines.caps.size).toBe(1);
  });

  it('issue 40: a job whose end began before the claim is not counted, though its transaction comes later in the log', async () => {
    const log = capped(1);
    log.job('a', 'k');
    log.job('b', 'k');
    log.entry('a', 'running', 0, 1);
    // b's claim was logged first (its transaction began first), but a's success began before b's
    // claim statement and committed before it counted: the slot was free.
    log.entry('b', 'running', 20_000, 1);
    log.entry('a', 'succeeded', 19_000, 1, 60_000);
    log.lease('b', 80_000);
    expect((await log.check()).violations).toEqual([]);
    // Nor is one that started about when the claim did: the log's order is not the order they counted in.
    log.job('c', 'k');
    log.entry('c', 'running', 21_000, 1);
    log.lease('c', 80_000);
    expect((await log.check()).violations).toEqual([]);
  });

  it('issue 40: a job whose lease had lapsed is not counted, whether swept later or still stored running', async () => {
    const log = capped(1);
    for (const id of ['a', 'b', 'c', 'd']) log.job(id, 'k');
    log.entry('a', 'running', 0, 1);
    // a's lease ran out at 30 s; b took the slot at 40 s; the sweep ended a's attempt at 50 s.
    log.entry('b', 'running', 40_000, 1);
    log.entry('a', 'dead_lettered', 50_000, 1, 30_000);
    log.entry('b', 'succeeded', 45_000, 1, 100_000);
    // c runs still, its stored lease lapsed before d started.
    log.entry('c', 'running', 200_000, 1);
    log.lease('c', 230_000);
    log.entry('d', 'running', 240_000, 1);
    log.lease('d', 300_000);
    expect((await log.check()).violations).toEqual([]);
    // Had c's stored lease still run at d's start, d broke the cap.
    log.lease('c', 260_000);
    expect((await log.check()).violations.map((v) => [v.rule, v.jobId])).toEqual([['limit_exceeded', 'd']]);
  });

  it('issue 40: a cap lowered below what runs lets nothing start until fewer run than it allows', async () => {
    const log = new Log();
    log.change('limit.set', 'key:k', { max: 3 }, -60 * MIN);
    for (const id of ['a', 'b', 'c', 'd', 'e']) log.job(id, 'k');
    log.entry('a', 'running', 0, 1);
    log.entry('b', 'running', 1, 1);
    log.entry('c', 'running', 2, 1);
    log.change('limit.set', 'key:k', { max: 1 }, 10 * MIN);
    log.entry('a', 'succeeded', 12 * MIN, 1, 20 * MIN);
    log.entry('b', 'succeeded', 13 * MIN, 1, 20 * MIN);
    // One still runs: the cap of one is full.
    log.entry('d', 'running', 14 * MIN, 1);
    log.entry('c', 'succeeded', 15 * MIN, 1, 20 * MIN);
    log.entry('d', 'succeeded', 16 * MIN, 1, 20 * MIN);
    log.entry('e', 'running', 17 * MIN, 1);
    log.lease('e', 20 * MIN);
    expect((await log.check()).violations.map((v) => [v.rule, v.jobId, v.message.match(/limit was \d+/)![0]])).toEqual([['limit_exceeded', 'd', 'limit was 1']]);
  });

  it('issue 40: around a change the higher limit is the one judged; a removed cap, a queue\'s, or one with no change logged before the start', async () => {
    const log = capped(1);
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) log.job(id, 'k');
    log.entry('a', 'running', 0, 1);
    // Raised to 2 fifty seconds after b started: b may have met the raise.
    log.change('limit.set', 'key:k', { max: 2 }, 90_000);
    log.entry('b', 'running', 40_000, 1);
    // Removed: any number may start.
    log.change('limit.set', 'key:k', { max: null }, 10 * MIN);
    log.entry('c', 'running', 12 * MIN, 1);
    log.entry('d', 'running', 12 * MIN + 1, 1);
    for (const id of ['a', 'b', 'c', 'd']) log.lease(id, 30 * MIN);
    const found = await log.check();
    expect(found.violations).toEqual([]);
    expect(found.capStarts).toBe(2);
    // A queue cap counts every job of the queue, keyed or not; a key with no logged change counts none.
    log.change('limit.set', 'queue:mail', { max: 1 }, 0);
    log.job('e', 'other', 'mail');
    log.job('f', null, 'mail');
    log.entry('e', 'running', 20 * MIN, 1);
    log.entry('f', 'running', 20 * MIN + 10_000, 1);
    log.lease('e', 30 * MIN);
    log.lease('f', 30 * MIN);
    expect((await log.check()).violations.map((v) => [v.rule, v.jobId, v.message.includes('queue:mail')])).toEqual([['limit_exceeded', 'f', true]]);
  });

  it('issue 40: a declared limit is judged like a set one; a change whose detail no store writes leaves the limit unjudged until the next', async () => {
    const log = capped(1, 'limit.declare');
    for (const id of ['a', 'b']) log.job(id, 'k');
    log.entry('a', 'running', 0, 1);
    log.entry('b', 'running', 10_000, 1);
    log.lease('a', MIN);
    log.lease('b', MIN);
    expect((await log.check()).violations.map((v) => v.rule)).toEqual(['limit_exceeded']);
    log.change('limit.set', 'key:k', { max: 'two' }, -30 * MIN);
    const found = await log.check();
    expect(found.violations).toEqual([]);
    expect(found.timelines.unreadable).toBe(1);
  });

  it('issue 40: claims that wait on a job whose lapsed lease nothing ended are judged up to a bound, the rest counted; once it ends they are settled and judging goes on', async () => {
    const log = capped(1);
    log.job('stuck', 'k');
    log.entry('stuck', 'running', 0, 1);
    log.lease('stuck', 30_000);
    const n = MAX_WAITING + 1;
    for (let i = 0; i < n; i++) {
      log.job(`j${i}`, 'k');
      log.entry(`j${i}`, 'running', 60_000 + i * 10, 1);
      log.entry(`j${i}`, 'succeeded', 60_000 + i * 10 + 5, 1, 60_000 + i * 10 + 60_000);
    }
    const waited = await log.check();
    expect(waited.violations).toEqual([]);
    expect(waited.unjudged).toBe(1);
    // The sweep ends the stuck attempt: every claim waiting on it settles, and a later start over the cap is found.
    log.entry('stuck', 'dead_lettered', 200_000, 1, 30_000);
    for (const id of ['x', 'y']) log.job(id, 'k');
    log.entry('x', 'running', 300_000, 1);
    log.entry('y', 'running', 310_000, 1);
    log.lease('x', 400_000);
    log.lease('y', 400_000);
    const settled = await log.check();
    expect(settled.violations.map((v) => [v.rule, v.jobId])).toEqual([['limit_exceeded', 'y']]);
    expect(settled.unjudged).toBe(1);
  });

  it('issue 40: only starts in the range are judged, against jobs that started before it', async () => {
    const log = capped(1);
    for (const id of ['a', 'b']) log.job(id, 'k');
    log.entry('a', 'running', 0, 1);
    log.entry('b', 'running', 5 * MIN, 1);
    log.lease('a', 10 * MIN);
    log.lease('b', 10 * MIN);
    expect((await log.check({ since: MIN })).violations.map((v) => v.jobId)).toEqual(['b']);
    expect((await log.check({ until: MIN })).violations).toEqual([]);
    expect((await log.check({ until: MIN })).capStarts).toBe(1);
  });

  it('issue 40: on a store whose writes take turns, overlaps and changes are judged to the millisecond', async () => {
    const log = capped(1);
    for (const id of ['a', 'b', 'c']) log.job(id, 'k');
    log.entry('a', 'running', 0, 1);
    log.entry('b', 'running', 50, 1);
    log.entry('a', 'succeeded', 100, 1, 60_000);
    log.lease('b', 60_000);
    // Raised after a ended: c, a moment later, takes the second slot beside b.
    log.change('limit.set', 'key:k', { max: 2 }, 150);
    log.entry('c', 'running', 200, 1);
    log.lease('c', 60_000);
    expect((await log.check()).violations).toEqual([]);
    log.serial = true;
    expect((await log.check()).violations.map((v) => [v.rule, v.jobId])).toEqual([['limit_exceeded', 'b']]);
  });

  it('issue 40: no limit ever logged, and no job with a unique key or minted by a schedule stored, reads no history', async () => {
    const log = new Log();
    log.job('a', 'k');
    log.entry('a', 'running', 0, 1);
    let reads = 0;
    const read = log.store.historyRead;
    log.store.historyRead = async (params) => {
      reads += 1;
      return read(params);
    };
    const found = await log.check({}, false);
    expect(found).toMatchObject({ capStarts: 0, violations: [] });
    expect(found.timelines.caps.size + found.timelines.rates.size).toBe(0);
    expect(reads).toBe(0);
  });
});

describe('verify: rate limits judged from the log', () => {
  const rated = (max: number, perMs: number) => {
    const log = new Log();
    log.change('rate_limit.set', 'key:k', { rate: { max, perMs } }, -60 * MIN);
    return log;
  };

  it('issue 40: starts a window apart are within the rate; one more within a window is rate_exceeded', async () => {
    const log = rated(2, 10_000);
    const at = [0, 5_000, 10_000, 15_000, 16_000];
    at.forEach((ms, i) => {
      log.job(`j${i}`, 'k');
      log.entry(`j${i}`, 'running', ms, 1);
    });
    const found = await log.check();
    // 10 s and 15 s each make two in their windows; the start at 16 s is a third within 9 s.
    expect(found.violations.map((v) => [v.rule, v.jobId])).toEqual([['rate_exceeded', 'j4']]);
    expect(found.violations[0]!.message).toBe('Job j4 started in entry 5 at 2030-01-01T00:00:16.000Z, one of 3 starts under key:k within 9000 ms, where its rate allows 2 per 10000 ms.');
    expect(found.rateStarts).toBe(5);
  });

  it('issue 40: a start logged after one stamped later still counts in its window', async () => {
    const log = rated(1, 10_000);
    log.job('a', 'k');
    log.job('b', 'k');
    log.entry('a', 'running', 5_000, 1);
    log.entry('b', 'running', 2_000, 1);
    expect((await log.check()).violations.map((v) => v.jobId)).toEqual(['b']);
  });

  it('issue 40: a new rate counts the starts after it, and not those within the margin of its setting', async () => {
    const log = new Log();
    for (const id of ['a', 'b', 'c', 'd']) log.job(id, 'k');
    log.entry('a', 'running', 0, 1);
    log.entry('b', 'running', 1_000, 1);
    log.change('rate_limit.declare', 'key:k', { rate: { max: 1, perMs: 10 * MIN } }, 2_000);
    // Within a minute of the declaration: not judged.
    log.entry('c', 'running', 30_000, 1);
    log.entry('d', 'running', CONCURRENT_MARGINS.changeMs + 5_000, 1);
    const found = await log.check();
    // d is the first start counted: a, b and c came before the limit, or too close to tell.
    expect(found.violations).toEqual([]);
    expect(found.rateStarts).toBe(1);
    log.job('e', 'k');
    log.entry('e', 'running', 3 * MIN, 1);
    expect((await log.check()).violations.map((v) => v.jobId)).toEqual(['e']);
  });
});

describe('verify: unique keys and occurrences judged from the log', () => {
  it('issue 40: a job that takes a unique key its wire name\'s unfinished job holds is unique_key_twice; a key of another name, or one freed, is not', async () => {
    const log = new Log();
    log.job('a', null, 'q', { uniqueKey: 'u' });
    log.job('b', null, 'q', { uniqueKey: 'u' });
    log.job('other', null, 'q', { uniqueKey: 'u', name: 'other' });
    log.job('c', null, 'q', { uniqueKey: 'u' });
    log.entry('a', 'scheduled', 0, 0);
    log.entry('other', 'scheduled', 5_000, 0);
    log.entry('b', 'scheduled', 10_000, 0);
    log.entry('a', 'running', 15_000, 1);
    log.entry('a', 'succeeded', 20_000, 1, 60_000);
    log.entry('b', 'cancelled', 25_000, 0);
    log.entry('c', 'scheduled', 30_000, 0);
    const found = await log.check();
    expect(found.violations.map((v) => [v.rule, v.jobId, v.entryIds])).toEqual([['unique_key_twice', 'b', [1, 3]]]);
    expect(found.violations[0]!.message).toBe('Job b took the unique key "u" of work in entry 3, while job a, unfinished since entry 1, still held it.');
    expect(found.uniqueKeysTaken).toBe(4);
  });

  it('issue 40: a replay takes the key again; a holder that ended about when the other took it, or still unfinished, is judged by its margin and its row', async () => {
    const log = new Log();
    for (const id of ['a', 'd', 'e']) log.job(id, null, 'q', { uniqueKey: 'u' });
    log.entry('a', 'scheduled', 0, 0);
    log.entry('a', 'running', 1_000, 1);
    log.entry('a', 'dead_lettered', 2_000, 1, 60_000);
    log.entry('d', 'scheduled', 10_000, 0);
    // d's success began a moment after e's enqueue was stamped, and may have committed before it
    // looked for a holder: within the margin, not judged.
    log.entry('d', 'running', 11_000, 1);
    log.entry('e', 'scheduled', 12_000, 0);
    log.entry('d', 'succeeded', 12_500, 1, 60_000);
    // a, replayed while e waits: a takes the key e holds.
    log.entry('a', 'scheduled', 30_000, 0);
    expect((await log.check()).violations.map((v) => [v.rule, v.jobId])).toEqual([['unique_key_twice', 'a']]);
    // e has no entry after its creation: its stored row says whether it still held the key. With
    // the row gone (only a finished job is deleted), it is taken to have given the key up.
    log.rows.delete('e');
    expect((await log.check()).violations).toEqual([]);
  });

  it('issue 40: two unfinished jobs for one schedule\'s tick are occurrence_twice', async () => {
    const log = new Log();
    log.job('m1', null, 'q', { scheduleId: 's' });
    log.job('m2', null, 'q', { scheduleId: 's' });
    log.entry('m1', 'scheduled', 0, 0);
    log.entry('m2', 'scheduled', 10_000, 0);
    const found = await log.check();
    expect(found.violations.map((v) => [v.rule, v.jobId])).toEqual([['occurrence_twice', 'm2']]);
    expect(found.violations[0]!.message).toBe('Job m2 was minted for the occurrence of schedule s at 2030-01-01T00:00:00.000Z in entry 2, while job m1, unfinished since entry 1, was that occurrence.');
    expect(found.occurrencesMinted).toBe(2);
  });
});
