import { describe, expect, it } from '@jest/globals';
import { SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore } from '../../lib/store/index.js';
import { EventLog, NodeLink, NodeTimers, StoreGateway, VirtualScheduler, type FaultSettings, type SimEvent } from '../../lib/simulator/index.js';

const CALM: FaultSettings = { crashEveryMs: 0, isolateEveryMs: 0, isolateMaxMs: 0, pauseEveryMs: 0, hintLoss: 0, hintDuplicate: 0, hintDelayMaxMs: 0, ackLoss: 0, latencyMaxMs: 0, operatorEveryMs: 0, limitChangeEveryMs: 0, shutdownEveryMs: 0, rateChangeEveryMs: 0, sequenceOperatorEveryMs: 0, batchOperatorEveryMs: 0 };
const JOB = { id: '0195f4c2-7c4b-7a41-9d2e-3b1c5a6f7e80', name: 'sim.work', payload: {} };

function setup(faults: Partial<FaultSettings> = {}) {
  const scheduler = new VirtualScheduler(0);
  const events: SimEvent[] = [];
  const log = new EventLog([{ onEvent: (e) => events.push(e) }]);
  const store = new MemoryJobStore({ clock: scheduler, probe: StoreGateway.probe(log, scheduler) });
  const gateway = new StoreGateway(store, log, scheduler);
  const timers = new NodeTimers(scheduler);
  const counters = { ackLost: 0, refused: 0, withheld: 0 };
  const link = new NodeLink({ kind: 'worker', workerId: 'w1' }, gateway, store, scheduler, timers, new SeededRandom(1), () => ({ ...CALM, ...faults }), log, counters);
  return { scheduler, store, link, view: link.view(), events, counters, timers };
}

async function outcome(promise: Promise<unknown>, scheduler: VirtualScheduler, until: number): Promise<string> {
  let settled = 'pending';
  promise.then(() => (settled = `ok@${scheduler.now()}`), (e: Error) => (settled = `${e.name}@${scheduler.now()}`));
  await scheduler.run(until);
  return settled;
}

describe('node link', () => {
  it('logs each call with the writes it caused, before the call itself', async () => {
    const { scheduler, view, events } = setup();
    expect(await outcome(view.jobEnqueue({ job: JOB }), scheduler, 10)).toBe('ok@0');
    expect(events.map((e) => e.type)).toEqual(['write', 'log', 'call']);
  });

  it('refuses calls while isolated in fail mode, and lets them through once healed', async () => {
    const { scheduler, view, link, counters, store } = setup();
    link.isolate(1_000, 'fail');
    expect(await outcome(view.jobEnqueue({ job: JOB }), scheduler, 10)).toBe('SimulatedNetworkError@0');
    expect(await store.jobGet({ jobId: JOB.id })).toBeNull();
    expect(counters.refused).toBe(1);
    await scheduler.run(1_000);
    expect(await outcome(view.jobEnqueue({ job: JOB }), scheduler, 1_010)).toBe('ok@1000');
  });

  it('withholds calls while isolated in withhold mode and runs them late, when it heals', async () => {
    const { scheduler, view, link, counters, store } = setup();
    link.isolate(1_000, 'withhold');
    const late = outcome(view.jobEnqueue({ job: JOB }), scheduler, 2_000);
    expect(await late).toBe('ok@1000');
    expect((await store.jobGet({ jobId: JOB.id }))?.createdAt.getTime()).toBe(1_000);
    expect(counters.withheld).toBe(1);
  });

  it('commits a call whose reply is lost and reports an error to the caller', async () => {
    const { scheduler, view, store, counters, events } = setup({ ackLoss: 1 });
    expect(await outcome(view.jobEnqueue({ job: JOB }), scheduler, 10)).toBe('SimulatedNetworkError@0');
    expect(await store.jobGet({ jobId: JOB.id })).not.toBeNull();
    expect(counters.ackLost).toBe(1);
    expect(events.some((e) => e.type === 'fault' && e.kind === 'ack_lost')).toBe(true);
  });

  it('sends registry writes past the network, drawing nothing from the seed, and refuses them while isolated', async () => {
    const { scheduler, view, link, store, events, counters } = setup({ latencyMaxMs: 50, ackLoss: 0.5 });
    const beat = { id: 'w1', host: 'h', pid: 1, version: '0.0.0', queues: ['default'], concurrency: 1, running: 0 };
    const drawsBefore = new SeededRandom(1).next();
    // They settle without the virtual clock moving at all: no latency was drawn.
    await view.nodeBeat(beat);
    await view.nodeStop({ id: 'w1' });
    expect(scheduler.now()).toBe(0);
    expect((await store.nodeList())[0]).toMatchObject({ id: 'w1', stoppedAt: new Date(0) });
    // Nothing logged, nothing lost: the link's random stream is where a fresh one starts.
    expect(events).toEqual([]);
    expect((link as unknown as { random: SeededRandom }).random.next()).toBe(drawsBefore);
    link.isolate(1_000, 'fail');
    await expect(view.nodeBeat(beat)).rejects.toThrow('nodeBeat: the store is unreachable');
    expect(counters).toEqual({ ackLost: 0, refused: 0, withheld: 0 });
  });

  it('holds replies for a paused node and never delivers them to a crashed one', async () => {
    const { scheduler, view, timers } = setup();
    timers.pause(500);
    expect(await outcome(view.jobEnqueue({ job: JOB }), scheduler, 1_000)).toBe('ok@500');
    timers.crash();
    expect(await outcome(view.jobGet({ jobId: JOB.id }), scheduler, 2_000)).toBe('pending');
  });

  it('loses, delays and duplicates wake-up hints as the faults say', async () => {
    const lossy = setup({ hintLoss: 1 });
    let heard = 0;
    await lossy.view.subscribeWakeHints({ listener: () => (heard += 1) });
    await outcome(lossy.view.jobEnqueue({ job: JOB }), lossy.scheduler, 10);
    expect(heard).toBe(0);

    const doubled = setup({ hintDuplicate: 1, hintDelayMaxMs: 100 });
    const at: number[] = [];
    await doubled.view.subscribeWakeHints({ listener: () => at.push(doubled.scheduler.now()) });
    await outcome(doubled.view.jobEnqueue({ job: JOB }), doubled.scheduler, 1_000);
    expect(at.length).toBe(2);
    expect(doubled.events.filter((e) => e.type === 'fault').map((e) => (e as { kind: string }).kind)).toEqual(expect.arrayContaining(['hint_duplicated']));
  });
});
