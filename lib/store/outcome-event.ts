import type { JobEvent } from '../core/index.js';
import type { NormalizedOutcome } from './checked/store-params.js';

/** A worker's checked outcome as the lifecycle event it is, for the stores that run the lifecycle in code. */
export function outcomeEvent(workerId: string, outcome: NormalizedOutcome): JobEvent {
  const { attempt } = outcome;
  switch (outcome.kind) {
    case 'succeeded':
      return { kind: 'succeed', workerId, attempt, output: outcome.output };
    case 'failed':
      return { kind: 'fail', workerId, attempt, error: outcome.error!, retryDelayMs: outcome.retryDelayMs };
    case 'dead_lettered':
      return { kind: 'dead_letter', workerId, attempt, error: outcome.error! };
    case 'snoozed':
      return { kind: 'snooze', workerId, attempt, delayMs: outcome.retryDelayMs };
    case 'quarantined':
      return { kind: 'quarantine', workerId, attempt, reason: outcome.error! };
  }
}
