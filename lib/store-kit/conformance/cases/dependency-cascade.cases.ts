import { expect, it } from '@jest/globals';
import type { EnqueueInput, JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, mustGet } from './helpers.js';

const id = (n: number) => `0190a5a2-0000-7000-8000-${String(n).padStart(12, '0')}`;

/** What the maintenance sweep does for dependencies: settle until nothing is left. */
async function maintain(store: JobStore) {
  while ((await store.jobSettleDependencies({ limit: 1_000 })) > 0);
}

/** Ends the root badly, by a dead-lettering outcome write or by an operator cancel. */
async function endRoot(store: JobStore, root: string, how: 'dead_lettered' | 'cancelled') {
  if (how === 'cancelled') {
    await store.jobCancel({ jobId: root });
    return;
  }
  const job = await claimOne(store, 'w');
  expect(job.id).toBe(root);
  const [result] = await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: root, attempt: job.attempt, kind: 'dead_lettered', error: 'broken' }] });
  expect(result).toMatchObject({ status: 'applied', state: 'dead_lettered' });
}

/** The states a job's history went through. */
async function states(store: JobStore, jobId: string) {
  return (await store.jobHistory({ jobId })).map((entry) => entry.state);
}

/**
 * Issue 19: a cascade of cancels through dependants is as deep as the graph, and a chain of
 * 20,000 is legal input, so no store may recurse once per level (PostgreSQL's stack depth,
 * SQLite's trigger depth, the JavaScript call stack).
 */
export function dependencyCascadeCases(ctx: SuiteContext): void {
  it.each(['dead_lettered', 'cancelled'] as const)('issue 19: a failed root cancels a chain of 5,000 on_success dependants without overflowing (root %s)', async (how) => {
    const h = await ctx.open();
    const length = 5_000;
    // id(0) is the root; id(i) depends on id(i - 1).
    const jobs: EnqueueInput[] = Array.from({ length: length + 1 }, (_, i) => ({
      id: id(i),
      name: 'chain',
      payload: i,
      ...(i === 0 ? { maxAttempts: 1 } : { dependsOn: [id(i - 1)] }),
    }));
    await h.store.jobEnqueueMany({ jobs });
    await endRoot(h.store, id(0), how);
    await maintain(h.store);
    for (const i of [1, 2, 1_500, length - 1, length]) {
      const job = await mustGet(h.store, id(i));
      expect(job).toMatchObject({ state: 'cancelled', lastError: `parent ${id(i - 1)} ended ${i === 1 ? how : 'cancelled'}` });
      expect(job.finishedAt).not.toBeNull();
      expect(await states(h.store, id(i))).toEqual(['awaiting_parents', 'cancelled']);
    }
    const stats = await h.store.jobStats();
    expect(stats.counts).toEqual([{ queue: 'default', state: 'cancelled', count: how === 'cancelled' ? length + 1 : length }, ...(how === 'cancelled' ? [] : [{ queue: 'default', state: 'dead_lettered', count: 1 }])]);
  });

  it('issue 19: a failed root cancels a fan-out of 1,200 with deep chains, diamonds and on_any_terminal dependants, each edge once', async () => {
    const h = await ctx.open();
    const fanOut = 1_200;
    const chains = 5;
    const depth = 1_500;
    const root = id(0);
    const child = (i: number) => id(1 + i);
    const link = (chain: number, level: number) => id(10_000 + chain * 10_000 + level);
    const head = (chain: number) => child(chain * 120 + 5);
    const waitsForever = await enqueue(h.store, { id: id(900_001), delayMs: 3_600_000 });
    const jobs: EnqueueInput[] = [{ id: root, name: 'root', payload: 0, maxAttempts: 1 }];
    for (let i = 0; i < fanOut; i++) jobs.push({ id: child(i), name: 'fan', payload: i, dependsOn: [root] });
    for (let c = 0; c < chains; c++) {
      for (let l = 0; l < depth; l++) jobs.push({ id: link(c, l), name: 'deep', payload: l, dependsOn: [l === 0 ? head(c) : link(c, l - 1)] });
    }
    const tolerant = id(900_002);
    const halfway = id(900_003);
    const diamond = id(900_004);
    const mixed = id(900_005);
    const deepTolerant = id(900_006);
    jobs.push(
      // Both parents are cancelled by the cascade: each edge lowers the latch once, to zero.
      { id: tolerant, name: 'tolerant', payload: 1, dependsOn: [child(0), child(1)], dependencyMode: 'on_any_terminal' },
      // One parent is cancelled, the other never finishes: one left.
      { id: halfway, name: 'halfway', payload: 2, dependsOn: [child(2), waitsForever], dependencyMode: 'on_any_terminal' },
      // Two cancelled parents: cancelled once, naming one of them.
      { id: diamond, name: 'diamond', payload: 3, dependsOn: [child(3), child(4)] },
      // A parent deep in a chain and one at the top.
      { id: mixed, name: 'mixed', payload: 4, dependsOn: [link(chains - 1, depth - 1), child(6)] },
      // Released at the bottom of a chain, so the cascade stops there.
      { id: deepTolerant, name: 'deep.tolerant', payload: 5, dependsOn: [link(chains - 2, depth - 1)], dependencyMode: 'on_any_terminal' },
      { id: id(900_007), name: 'after.tolerant', payload: 6, dependsOn: [deepTolerant] },
    );
    await h.store.jobEnqueueMany({ jobs });
    await endRoot(h.store, root, 'dead_lettered');
    await maintain(h.store);

    for (const i of [0, 7, 600, fanOut - 1]) {
      expect(await mustGet(h.store, child(i))).toMatchObject({ state: 'cancelled', lastError: `parent ${root} ended dead_lettered` });
    }
    for (let c = 0; c < chains; c++) {
      expect(await mustGet(h.store, link(c, 0))).toMatchObject({ state: 'cancelled', lastError: `parent ${head(c)} ended cancelled` });
      const leaf = await mustGet(h.store, link(c, depth - 1));
      expect(leaf).toMatchObject({ state: 'cancelled', lastError: `parent ${link(c, depth - 2)} ended cancelled` });
      expect(leaf.finishedAt).not.toBeNull();
      expect(await states(h.store, leaf.id)).toEqual(['awaiting_parents', 'cancelled']);
    }
    expect(await mustGet(h.store, tolerant)).toMatchObject({ state: 'scheduled', pendingParents: 0, lastError: null });
    expect(await mustGet(h.store, halfway)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    const cancelledDiamond = await mustGet(h.store, diamond);
    expect(cancelledDiamond.state).toBe('cancelled');
    expect([`parent ${child(3)} ended cancelled`, `parent ${child(4)} ended cancelled`]).toContain(cancelledDiamond.lastError);
    expect(await states(h.store, diamond)).toEqual(['awaiting_parents', 'cancelled']);
    expect((await mustGet(h.store, mixed)).state).toBe('cancelled');
    expect(await mustGet(h.store, deepTolerant)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    expect(await mustGet(h.store, id(900_007))).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    expect(await states(h.store, tolerant)).toEqual(['awaiting_parents', 'scheduled']);

    const counts = Object.fromEntries((await h.store.jobStats()).counts.map((c) => [c.state, c.count]));
    expect(counts).toEqual({ dead_lettered: 1, cancelled: fanOut + chains * depth + 2, scheduled: 3, awaiting_parents: 2 });
    expect(await h.store.jobSettleDependencies({ limit: 1_000 })).toBe(0);
  });
}
