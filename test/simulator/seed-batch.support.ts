import { expect } from '@jest/globals';
import { describeSettings, runBatch } from '../../lib/simulator/index.js';

/**
 * Runs a fixed batch of seeds and fails with every failing seed's one-line settings and the
 * command that replays it.
 */
export async function expectCleanSeeds(base: bigint, count: number): Promise<void> {
  const summary = await runBatch(base, count);
  const failures = summary.failed.map((result) => {
    const bad = result.oracles.filter((o) => o.violations > 0);
    return `npm run sim -- --seed 0x${result.settings.seed.toString(16)}  # ${bad.map((o) => `${o.name}=${o.violations}: ${o.examples[0]}`).join('; ')}\n  ${describeSettings(result.settings)}`;
  });
  expect(failures).toEqual([]);
  expect(summary.seeds).toBe(count);
  // The batch must have exercised the faults it is meant to survive.
  expect(summary.coverage.staleOutcomesFenced).toBeGreaterThan(0);
  expect(summary.coverage.leasesLostMidHandler).toBeGreaterThan(0);
  expect(summary.coverage.unknownCommits).toBeGreaterThan(0);
  expect(summary.coverage.limitSaturations).toBeGreaterThan(0);
  expect(summary.coverage.uniqueKept).toBeGreaterThan(0);
  expect(summary.coverage.uniqueReplaced).toBeGreaterThan(0);
  expect(summary.coverage.replaysRefusedForKey).toBeGreaterThan(0);
  expect(summary.coverage.limitChangesWhileRunning).toBeGreaterThan(0);
  expect(summary.coverage.rateLimitSaturations).toBeGreaterThan(0);
  // Claims came back short beside held-back jobs (a hot key at its cap), with nothing unheld left behind.
  expect(summary.coverage.claimsShortBesideHeld).toBeGreaterThan(0);
  // Schedules caught up after long outages, some far enough that a cron count was a lower bound.
  expect(summary.coverage.scheduleCatchUps).toBeGreaterThan(0);
  expect(summary.coverage.lowerBoundCounts).toBeGreaterThan(0);
  expect(summary.coverage.stopsGivenUp).toBeGreaterThan(0);
  // Handlers snoozed, some past their limit (issue 39 item 5).
  expect(summary.coverage.snoozesApplied).toBeGreaterThan(0);
  expect(summary.coverage.snoozeLimitsReached).toBeGreaterThan(0);
  // Enqueues met open debounce and throttle windows; debounces reached their window's end, and
  // throttle windows closed and opened again.
  expect(summary.coverage.debounced).toBeGreaterThan(0);
  expect(summary.coverage.debouncesCapped).toBeGreaterThan(0);
  expect(summary.coverage.throttled).toBeGreaterThan(0);
  expect(summary.coverage.throttleWindowsReopened).toBeGreaterThan(0);
  // Sequences were held behind failures, ran on past them (continue), kept the place of jobs
  // cancelled before their turn, and went on once a replayed failure succeeded.
  expect(summary.coverage.sequenceBlocks).toBeGreaterThan(0);
  expect(summary.coverage.sequenceContinues).toBeGreaterThan(0);
  expect(summary.coverage.sequenceCancelsInLine).toBeGreaterThan(0);
  expect(summary.coverage.sequenceReplaysReleased).toBeGreaterThan(0);
  // Batch callbacks ran and were cancelled unrun as their batches ended, and so were on_failure
  // dependants; operators cancelled whole batches.
  expect(summary.coverage.batchCallbacksRun).toBeGreaterThan(0);
  expect(summary.coverage.batchCallbacksSkipped).toBeGreaterThan(0);
  expect(summary.coverage.onFailureRuns).toBeGreaterThan(0);
  expect(summary.coverage.onFailureSkips).toBeGreaterThan(0);
  expect(summary.coverage.batchCancels).toBeGreaterThan(0);
  // Batch handler calls took several jobs, failed one alone while the rest succeeded, and threw.
  expect(summary.coverage.batchHandlerCalls).toBeGreaterThan(0);
  expect(summary.coverage.batchHandlerFailedAlone).toBeGreaterThan(0);
  expect(summary.coverage.batchHandlerThrows).toBeGreaterThan(0);
  for (const kind of ['crash', 'isolate_fail', 'isolate_withhold', 'pause', 'hint_lost', 'hint_duplicated', 'hint_delayed', 'ack_lost', 'operator_cancel', 'operator_replay', 'operator_discard', 'operator_limit', 'operator_rate_limit', 'operator_batch_cancel', 'shutdown']) {
    expect({ kind, injected: (summary.faults[kind] ?? 0) > 0 }).toEqual({ kind, injected: true });
  }
}
