import { describe, expect, it } from '@jest/globals';
import { NodeTimers, VirtualScheduler } from '../../lib/simulator/index.js';

describe('virtual scheduler', () => {
  it('fires callbacks in time order, ties in scheduling order, and sets the clock to each instant', async () => {
    const scheduler = new VirtualScheduler(1_000);
    const seen: string[] = [];
    scheduler.at(20, () => seen.push(`b@${scheduler.now()}`));
    scheduler.at(10, () => seen.push(`a@${scheduler.now()}`));
    scheduler.at(20, () => seen.push(`c@${scheduler.now()}`));
    const cancelled = scheduler.at(15, () => seen.push('never'));
    scheduler.cancel(cancelled);
    await scheduler.run(1_100);
    expect(seen).toEqual(['a@1010', 'b@1020', 'c@1020']);
    expect(scheduler.now()).toBe(1_100);
  });

  it('lets promise chains a callback starts finish before the next callback', async () => {
    const scheduler = new VirtualScheduler(0);
    const seen: string[] = [];
    scheduler.at(1, () => void Promise.resolve().then(() => Promise.resolve()).then(() => seen.push('chain')));
    scheduler.at(1, () => seen.push('next'));
    await scheduler.run(10);
    expect(seen).toEqual(['chain', 'next']);
  });

  it('stops early when the stop condition holds', async () => {
    const scheduler = new VirtualScheduler(0);
    let fired = 0;
    for (let i = 1; i <= 5; i++) scheduler.at(i * 10, () => (fired += 1));
    await scheduler.run(1_000, () => fired === 2);
    expect(fired).toBe(2);
    expect(scheduler.now()).toBe(20);
  });
});

describe('node timers', () => {
  it('holds callbacks during a pause and fires them in order when it ends', async () => {
    const scheduler = new VirtualScheduler(0);
    const timers = new NodeTimers(scheduler);
    const seen: string[] = [];
    timers.setTimeout(() => seen.push(`a@${scheduler.now()}`), 10);
    timers.setTimeout(() => seen.push(`b@${scheduler.now()}`), 20);
    timers.pause(500);
    await scheduler.run(1_000);
    expect(seen).toEqual(['a@500', 'b@500']);
  });

  it('drops everything on a crash and ignores new timers', async () => {
    const scheduler = new VirtualScheduler(0);
    const timers = new NodeTimers(scheduler);
    const seen: string[] = [];
    timers.setTimeout(() => seen.push('before'), 10);
    timers.crash();
    timers.setTimeout(() => seen.push('after'), 10);
    await scheduler.run(1_000);
    expect(seen).toEqual([]);
    expect(timers.isCrashed).toBe(true);
  });
});
