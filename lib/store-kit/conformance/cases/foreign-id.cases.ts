import { expect, it } from '@jest/globals';
import { OccurrenceId } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, mustGet } from './helpers.js';

/**
 * Ids other systems mint that the uuid package's RFC 9562 check refused, and the Rust scheduler
 * takes: the nil-like id from the issue, version 0, the NCS (0), Microsoft (7) and reserved (f)
 * variants, and the nil and max ids.
 */
export const FOREIGN_IDS = {
  nilLike: '00000000-0000-0000-0000-000000000001',
  version0: '12345678-9abc-0def-8123-456789abcdef',
  ncsVariant: '12345678-9abc-4def-0123-456789abcdef',
  microsoftVariant: '12345678-9abc-4def-c123-456789abcdef',
  reservedVariant: '12345678-9abc-fdef-f123-456789abcdef',
  nil: '00000000-0000-0000-0000-000000000000',
  max: 'ffffffff-ffff-ffff-ffff-ffffffffffff',
} as const;

/** Issue 19 item 11: any 128-bit UUID text is a job or schedule id, on every store. */
export function foreignIdCases(ctx: SuiteContext): void {
  const { nilLike, version0, ncsVariant, microsoftVariant, reservedVariant, nil, max } = FOREIGN_IDS;

  it('issue 19 item 11: ids of any version and variant are job ids and dependsOn targets, and derive the same occurrence ids', async () => {
    const h = await ctx.open();
    await h.store.jobEnqueueMany({
      jobs: [
        { id: nilLike, name: 'parent', payload: 1 },
        { id: reservedVariant, name: 'child', payload: 2, dependsOn: [nilLike] },
        { id: max, name: 'grandchild', payload: 3, dependsOn: [reservedVariant], dependencyMode: 'on_any_terminal' },
      ],
    });
    await h.store.jobEnqueue({ job: { id: ncsVariant, name: 'other', payload: 4, dependsOn: [max], delayMs: 60_000 } });
    expect(await mustGet(h.store, reservedVariant)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    const parent = await claimOne(h.store, 'w');
    expect(parent).toMatchObject({ id: nilLike, occurrenceId: OccurrenceId.derive(nilLike, parent.scheduledFor) });
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: nilLike, attempt: 1, kind: 'succeeded', output: { ok: 1 } }] });
    expect(await mustGet(h.store, reservedVariant)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    expect(await h.store.jobParentOutput({ jobId: reservedVariant, ancestorId: nilLike })).toEqual({ found: true, output: { ok: 1 } });
    // Operator actions and reads by those ids, in upper case too.
    expect((await h.store.jobCancel({ jobId: reservedVariant.toUpperCase() })).outcome).toBe('cancelled');
    expect(await mustGet(h.store, max)).toMatchObject({ state: 'scheduled' });
    expect((await h.store.jobHistory({ jobId: reservedVariant })).map((e) => e.state)).toEqual(['awaiting_parents', 'scheduled', 'cancelled']);
    expect((await h.store.jobList({ limit: 10 })).map((j) => j.id).sort()).toEqual([nilLike, ncsVariant, reservedVariant, max].sort());
  });

  it('issue 19 item 11: ids of any version and variant are schedule ids, and mint the occurrence the Rust scheduler derives', async () => {
    const h = await ctx.open();
    for (const id of [version0, microsoftVariant, nil]) {
      const { schedule, created } = await h.store.scheduleUpsert({ schedule: { id, name: 'report', everyMs: 60_000 } });
      expect({ id: schedule.id, created }).toEqual({ id, created: true });
      const { id: jobId } = await h.store.scheduleTrigger({ scheduleId: id.toUpperCase() });
      const minted = await mustGet(h.store, jobId);
      expect(minted).toMatchObject({ scheduleId: id, occurrenceId: jobId });
      expect(jobId).toBe(OccurrenceId.derive(id, minted.scheduledFor));
      expect((await h.store.schedulePause({ scheduleId: id })).state).toBe('paused');
      expect((await h.store.scheduleResume({ scheduleId: id })).state).toBe('active');
      expect(await h.store.scheduleRemove({ scheduleId: id })).toBe(true);
    }
  });

  it('issue 19 item 11: the simple, braced and urn forms of an id, in either case, name one job', async () => {
    const h = await ctx.open();
    const hex = version0.replaceAll('-', '');
    const first = await h.store.jobEnqueue({ job: { id: `{${version0.toUpperCase()}}`, name: 'forms', payload: 1 } });
    expect(first).toEqual({ id: version0, created: true });
    expect(await h.store.jobEnqueue({ job: { id: `urn:uuid:${version0}`, name: 'forms', payload: 2 } })).toEqual({ id: version0, created: false });
    expect(await h.store.jobEnqueue({ job: { id: hex.toUpperCase(), name: 'forms', payload: 3 } })).toEqual({ id: version0, created: false });
    const child = await h.store.jobEnqueue({ job: { name: 'forms.child', payload: 4, dependsOn: [hex] } });
    expect(await mustGet(h.store, child.id)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    expect((await h.store.jobGet({ jobId: `urn:uuid:${version0}` }))?.payload).toBe(1);
  });
}
