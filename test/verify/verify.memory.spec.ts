import { describe } from '@jest/globals';
import type { HistoryEntry } from '../../lib/store/index.js';
import type { MemoryTables } from '../../lib/store/memory/memory-tables.js';
import { ManualClock, MemoryJobStore } from '../../lib/testing/index.js';
import { verifyCases } from './verify.cases.js';
import { describe as describeRanges, expect, it } from '@jest/globals';
import { verifyHistory } from '../../lib/verify/index.js';

describe('verifyHistory on the memory store', () => {
  verifyCases(async () => {
    const store = new MemoryJobStore();
    // The store keeps its tables to itself; a broken store is simulated by writing them directly.
    const tables = (store as unknown as { tables: MemoryTables }).tables;
    return {
      store,
      writeEntry: async (jobId, state, attempt, lease, inMs = 0) => {
        const id = tables.nextHistoryId++;
        const name = tables.jobs.get(jobId)!.name;
        const entry: HistoryEntry = { id, position: String(id), jobId, name, at: new Date(store.clock.now() + inMs), state, attempt, error: null, workerId: lease?.workerId ?? null, leaseUntil: lease?.leaseUntil ?? null };
        tables.history.push(entry);
      },
      now: () => store.clock.now(),
      deleteRow: async (jobId) => {
        tables.jobs.delete(jobId);
      },
      trimOldest: async (jobId, count) => {
        const oldest = new Set(tables.history.filter((e) => e.jobId === jobId).slice(0, count));
        tables.history.splice(0, tables.history.length, ...tables.history.filter((e) => !oldest.has(e)));
      },
      copyJob: async (jobId, newId, inMs) => {
        const row = tables.jobs.get(jobId)!;
        tables.jobs.set(newId, { ...row, id: newId });
        const id = tables.nextHistoryId++;
        tables.history.push({ id, position: String(id), jobId: newId, name: row.name, at: new Date(store.clock.now() + inMs), state: row.state, attempt: row.attempt, error: null, workerId: null, leaseUntil: null });
      },
      backdateAudit: async (ms) => {
        tables.auditLog.splice(0, tables.auditLog.length, ...tables.auditLog.map((entry) => ({ ...entry, at: new Date(entry.at.getTime() - ms) })));
      },
      close: async () => {},
    };
  });
});

describeRanges('verifyHistory ranges', () => {
  it('issue 40: cuts a job\'s stretch by entry order, so an entry stamped before the one it follows is no gap', async () => {
    const clock = new ManualClock();
    const store = new MemoryJobStore({ clock });
    const tables = (store as unknown as { tables: MemoryTables }).tables;
    const step = () => clock.advance(1_000);
    const { id } = await store.jobEnqueue({ job: { name: 'work', payload: 1, maxAttempts: 1 } });
    step();
    let [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 });
    step();
    await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: job!.attempt, kind: 'failed', error: 'boom', retryDelayMs: 0 }] });
    step();
    await store.jobReplay({ jobId: id });
    step();
    [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 });
    step();
    await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: job!.attempt, kind: 'succeeded' }] });
    const entries = tables.history.filter((e) => e.jobId === id);
    expect(entries.map((e) => e.state)).toEqual(['scheduled', 'running', 'dead_lettered', 'scheduled', 'running', 'succeeded']);
    // The replay's statement started before the dead letter's committed, and waited for its row.
    const [dead, replay] = [entries[2]!, entries[3]!];
    const replayIndex = tables.history.indexOf(replay);
    tables.history[replayIndex] = { ...replay, at: new Date(dead.at.getTime() - 500) };
    const since = new Date(dead.at.getTime() - 100);
    const report = await verifyHistory(store, { since });
    expect(report.violations).toEqual([]);
    // Four entries in the range, and four changes judged: the one from the entry before the range into it too.
    expect(report.checked).toMatchObject({ entries: 4, transitions: 4 });
    const until = await verifyHistory(store, { until: new Date(dead.at.getTime() + 100) });
    expect(until.violations).toEqual([]);
    // Cut at the first entry at or after `until`: the replay, stamped before it, is in.
    expect(until.checked).toMatchObject({ entries: 4 });
  });

  it('issue 40: a limit with no change in the audit log (declared before declarations were audited) is counted and said', async () => {
    const store = new MemoryJobStore();
    const tables = (store as unknown as { tables: MemoryTables }).tables;
    await store.jobEnqueue({ job: { name: 'work', payload: 1, concurrencyKey: 'old', concurrencyLimit: 2, rateLimit: { max: 5, perMs: 1_000 } } });
    await store.concurrencyLimitSet({ target: { queue: 'default' }, max: 3 });
    // As an older version left it: the declarations were never audited, the queue's cap was.
    tables.auditLog.splice(0, tables.auditLog.length, ...tables.auditLog.filter((entry) => !entry.action.endsWith('.declare')));
    const report = await verifyHistory(store);
    expect(report.notChecked).toContain('2 limits have no change in the audit log (declared before limit declarations were audited), so the starts under them were not judged.');
  });

  it('issue 40: judges a lease taken before the range and ended in it, from the entry before the range', async () => {
    const clock = new ManualClock();
    const store = new MemoryJobStore({ clock });
    const tables = (store as unknown as { tables: MemoryTables }).tables;
    const { id } = await store.jobEnqueue({ job: { name: 'work', payload: 1 } });
    const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 });
    clock.advance(120_000);
    const since = new Date(clock.now());
    // A success written a minute after its lease ran out, as a store without a fence would.
    const entryId = tables.nextHistoryId++;
    tables.history.push({ id: entryId, position: String(entryId), jobId: id, name: 'work', at: new Date(clock.now()), state: 'succeeded', attempt: 1, error: null, workerId: 'w', leaseUntil: job!.leasedUntil });
    const report = await verifyHistory(store, { since, until: new Date(clock.now() + 1) });
    expect(report.violations.map((v) => v.rule)).toEqual(['stale_lease']);
    expect(report.checked).toMatchObject({ entries: 1, attempts: 0, leases: 1 });
  });
});
