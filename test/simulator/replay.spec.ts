import { describe, expect, it } from '@jest/globals';
import { batchSeed, describeSettings, parseSeed, runSimulation, type SimEvent } from '../../lib/simulator/index.js';

// These tests run the simulator, which is CPU-bound: a seed costs 58–65 ms of CPU at the median.
// Their timeout only catches a hang, so it is sized for a loaded machine, as the seed batches' is:
// at a load of 15 on 2 cores the 60 seeds below took longer than the 120 s they had.
const CPU_BOUND_MS = 900_000;

describe('simulator replay', () => {
  it('gives the same event-log hash for two runs of one seed', async () => {
    for (const seed of [1n, 0xdeadbeefcafef00dn, batchSeed(0n, 7)]) {
      const first = await runSimulation(seed);
      const second = await runSimulation(seed);
      expect(second.hash).toBe(first.hash);
      expect(second.events).toBe(first.events);
      expect(first.events).toBeGreaterThan(100);
    }
  }, CPU_BOUND_MS);

  it('gives different runs for different seeds', async () => {
    const hashes = new Set<string>();
    for (let i = 0; i < 5; i++) hashes.add((await runSimulation(batchSeed(0n, i))).hash);
    expect(hashes.size).toBe(5);
  }, CPU_BOUND_MS);

  it('replays the same events in the same order, not just the same count', async () => {
    const trace = async () => {
      const events: string[] = [];
      await runSimulation(3n, { trace: (event: SimEvent) => events.push(JSON.stringify(event)) });
      return events;
    };
    const [a, b] = [await trace(), await trace()];
    expect(b).toEqual(a);
  }, CPU_BOUND_MS);

  it('replaces a crashed node once, even when the liveness phase restarts it before its own restart timer', async () => {
    let crashesNearLiveness = 0;
    for (let i = 0; i < 60; i++) {
      const result = await runSimulation(batchSeed(0n, i));
      // A graceful restart (the shutdown fault) boots a replacement too, once its stop resolved.
      expect({ seed: i, booted: result.bootedNodes }).toEqual({ seed: i, booted: result.settings.nodes + result.faults.crash + result.faults.shutdown });
      if (result.faults.crash > 0) crashesNearLiveness += 1;
    }
    expect(crashesNearLiveness).toBeGreaterThan(0);
  }, CPU_BOUND_MS);

  it('prints the seed and every derived setting on one line', async () => {
    const line = describeSettings((await runSimulation(parseSeed('0x2a'))).settings);
    expect(line.startsWith('seed=0x000000000000002a ')).toBe(true);
    for (const key of ['nodes=', 'concurrency=', 'leaseMs=', 'safetyMs=', 'livenessBoundMs=', 'plain=', 'poison=', 'graphs=', 'keyed=', 'schedules=', 'crashEveryMs=', 'isolateEveryMs=', 'pauseEveryMs=', 'hintLoss=', 'ackLoss=', 'operatorEveryMs=']) {
      expect(line).toContain(key);
    }
    expect(line).not.toContain('\n');
  }, CPU_BOUND_MS);

  it('refuses a seed that is not a 64-bit number', () => {
    expect(() => parseSeed('12x')).toThrow('A seed must be a 64-bit number in decimal or 0x-hex, got "12x".');
    expect(() => parseSeed('0x1ffffffffffffffff')).toThrow(/64-bit/);
    expect(parseSeed('18446744073709551615')).toBe(0xffff_ffff_ffff_ffffn);
  });
});
