import { expect, it } from '@jest/globals';
import type { JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { enqueue, LEASE_MS } from './helpers.js';

const ROUNDS = 6;
const DEPENDANTS = 6;

/** Two parents, claimed and running: their outcomes are the writes the dependants race. */
async function runningParents(store: JobStore) {
  const parents = [await enqueue(store, { name: 'parent' }), await enqueue(store, { name: 'parent' })];
  const claimed = await store.jobClaim({ workerId: 'w-parents', limit: 2, queues: ['default'], leaseMs: LEASE_MS });
  expect(claimed.map((job) => job.id).sort()).toEqual([...parents].sort());
  return claimed;
}

/**
 * Checks what must hold after the race, without any maintenance sweep: every dependant is due at
 * once (latch 0), and one claim returns each of them exactly once.
 */
async function expectReleased(store: JobStore, dependants: readonly string[]) {
  for (const id of dependants) expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  const claimed = await store.jobClaim({ workerId: 'w-children', limit: 50, queues: ['default'], leaseMs: LEASE_MS });
  expect(claimed.map((job) => job.id).sort()).toEqual([...dependants].sort());
  await store.jobCompleteMany({ workerId: 'w-children', outcomes: claimed.map((job) => ({ jobId: job.id, attempt: job.attempt, kind: 'succeeded' as const })) });
}

export function dependencyRaceCases(ctx: SuiteContext): void {
  it('issue 19 item 4: dependants enqueued while both parents report success are released at once, with no sweep', async () => {
    const h = await ctx.open();
    for (let round = 0; round < ROUNDS; round++) {
      const [p1, p2] = await runningParents(h.store);
      let dependants: string[] = [];
      await Promise.all([
        h.store.jobCompleteMany({ workerId: 'w-parents', outcomes: [{ jobId: p1!.id, attempt: p1!.attempt, kind: 'succeeded' }] }),
        h.store.jobCompleteMany({ workerId: 'w-parents', outcomes: [{ jobId: p2!.id, attempt: p2!.attempt, kind: 'succeeded' }] }),
        Promise.all(Array.from({ length: DEPENDANTS }, () => enqueue(h.store, { name: 'child', dependsOn: [p1!.id, p2!.id] }))).then((ids) => (dependants = ids)),
      ]);
      await expectReleased(h.store, dependants);
    }
  });

  it('issue 19 item 4: the same race against one outcome batch that finishes both parents, with mixed dependency modes', async () => {
    const h = await ctx.open();
    for (let round = 0; round < ROUNDS; round++) {
      const [p1, p2] = await runningParents(h.store);
      let dependants: string[] = [];
      await Promise.all([
        h.store.jobCompleteMany({
          workerId: 'w-parents',
          outcomes: [
            { jobId: p2!.id, attempt: p2!.attempt, kind: 'succeeded' },
            { jobId: p1!.id, attempt: p1!.attempt, kind: 'succeeded' },
          ],
        }),
        Promise.all(
          Array.from({ length: DEPENDANTS }, (_, i) =>
            enqueue(h.store, { name: 'child', dependsOn: i % 2 ? [p1!.id, p2!.id] : [p2!.id, p1!.id], dependencyMode: i % 3 ? 'on_success' : 'on_any_terminal' }),
          ),
        ).then((ids) => (dependants = ids)),
      ]);
      await expectReleased(h.store, dependants);
    }
  });

  it('issue 19 item 4: a dependant of a parent that fails for good at the same moment is cancelled at once, never run', async () => {
    const h = await ctx.open();
    for (let round = 0; round < ROUNDS; round++) {
      const [p1, p2] = await runningParents(h.store);
      let dependants: string[] = [];
      await Promise.all([
        h.store.jobCompleteMany({ workerId: 'w-parents', outcomes: [{ jobId: p1!.id, attempt: p1!.attempt, kind: 'dead_lettered', error: 'broken' }] }),
        h.store.jobCompleteMany({ workerId: 'w-parents', outcomes: [{ jobId: p2!.id, attempt: p2!.attempt, kind: 'succeeded' }] }),
        Promise.all(Array.from({ length: DEPENDANTS }, () => enqueue(h.store, { name: 'child', dependsOn: [p1!.id, p2!.id] }))).then((ids) => (dependants = ids)),
      ]);
      for (const id of dependants) expect(await h.store.jobGet({ jobId: id })).toMatchObject({ state: 'cancelled', lastError: `parent ${p1!.id} ended dead_lettered` });
      expect(await h.store.jobClaim({ workerId: 'w-children', limit: 50, queues: ['default'], leaseMs: LEASE_MS })).toEqual([]);
    }
  });
}
