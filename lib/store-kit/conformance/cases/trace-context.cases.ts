import { expect, it } from '@jest/globals';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, expectRefused, mustGet } from './helpers.js';

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const STATE = 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE';

/** The W3C trace context a job carries from its producer to each attempt. */
export function traceContextCases(ctx: SuiteContext): void {
  it('stores a trace context with the job and hands it back on read and on every claim', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { traceContext: { traceparent: PARENT, tracestate: STATE }, retry: { baseDelayMs: 0 } });
    expect((await mustGet(h.store, id)).traceContext).toEqual({ traceparent: PARENT, tracestate: STATE });
    const first = await claimOne(h.store, 'w');
    expect(first.traceContext).toEqual({ traceparent: PARENT, tracestate: STATE });
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: 'x', retryDelayMs: 0 }] });
    // A retry is claimed with the same context: its span is a sibling of the first attempt's.
    expect((await claimOne(h.store, 'w')).traceContext).toEqual({ traceparent: PARENT, tracestate: STATE });
  });

  it('keeps jobs without a context at null, in a batch that mixes both and through the dependency and unique paths', async () => {
    const h = await ctx.open();
    const parent = await enqueue(h.store);
    const [a, b, c] = await h.store.jobEnqueueMany({
      jobs: [
        { name: 'test.job', payload: 1, traceContext: { traceparent: PARENT } },
        { name: 'test.job', payload: 2 },
        { name: 'test.job', payload: 3, dependsOn: [parent], uniqueKey: 'k', traceContext: { traceparent: PARENT, tracestate: STATE } },
      ],
    });
    expect((await mustGet(h.store, a!.id)).traceContext).toEqual({ traceparent: PARENT });
    expect((await mustGet(h.store, b!.id)).traceContext).toBeNull();
    expect((await mustGet(h.store, c!.id)).traceContext).toEqual({ traceparent: PARENT, tracestate: STATE });
    expect((await mustGet(h.store, parent)).traceContext).toBeNull();
  });

  it("gives each dependency edge the other job's trace context", async () => {
    const h = await ctx.open();
    const traced = await enqueue(h.store, { traceContext: { traceparent: PARENT, tracestate: STATE } });
    const plain = await enqueue(h.store);
    const child = await enqueue(h.store, { dependsOn: [traced, plain], traceContext: { traceparent: PARENT } });
    const edges = await h.store.jobEdges({ jobId: child });
    expect(edges!.parents.map((p) => [p.id, p.traceContext])).toEqual(
      [
        [traced, { traceparent: PARENT, tracestate: STATE }],
        [plain, null],
      ].sort((x, y) => ((x[0] as string) < (y[0] as string) ? -1 : 1)),
    );
    expect((await h.store.jobEdges({ jobId: traced }))!.dependants).toMatchObject([{ id: child, traceContext: { traceparent: PARENT } }]);
  });

  it('stores a schedule’s trace context with its definition, and keeps it through an upsert that changes nothing', async () => {
    const h = await ctx.open();
    const OTHER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const base = { name: 'test.job', everyMs: 60_000 };
    const { schedule } = await h.store.scheduleUpsert({ schedule: { ...base, traceContext: { traceparent: PARENT, tracestate: STATE } } });
    expect(schedule.traceContext).toEqual({ traceparent: PARENT, tracestate: STATE });
    const same = await h.store.scheduleUpsert({ schedule: { ...base, id: schedule.id, traceContext: { traceparent: OTHER } } });
    expect([same.changed, same.schedule.traceContext]).toEqual([false, { traceparent: PARENT, tracestate: STATE }]);
    const changed = await h.store.scheduleUpsert({ schedule: { ...base, id: schedule.id, everyMs: 120_000, traceContext: { traceparent: OTHER } } });
    expect([changed.changed, (await h.store.scheduleGet({ scheduleId: schedule.id }))!.traceContext]).toEqual([true, { traceparent: OTHER }]);
    const untraced = await h.store.scheduleUpsert({ schedule: { ...base, everyMs: 30_000 } });
    expect(untraced.schedule.traceContext).toBeNull();
    const before = await h.snapshot();
    await expectRefused(() => h.store.scheduleUpsert({ schedule: { ...base, traceContext: { traceparent: 'nope' } } }), /traceContext\.traceparent must be a W3C traceparent/);
    expect(await h.snapshot()).toEqual(before);
  });

  it.each([
    [{ traceparent: 'not-a-traceparent' }, /traceContext\.traceparent must be a W3C traceparent/],
    [{ traceparent: '00-00000000000000000000000000000000-b7ad6b7169203331-01' }, /traceContext\.traceparent must be a W3C traceparent/],
    [{ traceparent: 'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, /traceContext\.traceparent must be a W3C traceparent/],
    [{ traceparent: PARENT, tracestate: 'a=1\nforged: header' }, /traceContext\.tracestate must be at most 512 printable ASCII characters/],
    [{ traceparent: PARENT, tracestate: 'x'.repeat(513) }, /traceContext\.tracestate must be at most 512/],
    [{ traceparent: PARENT, baggage: 'secret=1' }, /traceContext\.baggage is not a trace context field/],
    ['00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', /traceContext must be an object/],
  ])('refuses the trace context %j before writing anything', async (traceContext, message) => {
    const h = await ctx.open();
    const before = await h.snapshot();
    await expectRefused(() => enqueue(h.store, { traceContext: traceContext as never }), message);
    expect(await h.snapshot()).toEqual(before);
  });
}
