import { afterAll, afterEach, beforeAll, describe } from '@jest/globals';
import type { ConformanceTarget, SuiteContext } from './harness.js';
import { badInputCases } from './cases/bad-input.cases.js';
import { optionKeyCases } from './cases/option-keys.cases.js';
import { claimCases } from './cases/claim.cases.js';
import { priorityCases } from './cases/priority.cases.js';
import { dependencyCases } from './cases/dependency.cases.js';
import { dependencyBatchCases } from './cases/dependency-batch.cases.js';
import { dependencyCascadeCases } from './cases/dependency-cascade.cases.js';
import { dependencyRaceCases } from './cases/dependency-race.cases.js';
import { historyCases } from './cases/history.cases.js';
import { jobCountCases } from './cases/job-counts.cases.js';
import { jobWaitCases } from './cases/job-wait.cases.js';
import { leanFinishCases } from './cases/lean-finish.cases.js';
import { jsonWalkCases } from './cases/json-walk.cases.js';
import { limitCases } from './cases/limit.cases.js';
import { heldBackCases } from './cases/held-back.cases.js';
import { groupCases } from './cases/group.cases.js';
import { groupListCases } from './cases/group-list.cases.js';
import { historyScanCases } from './cases/history-scan.cases.js';
import { auditAppendCases } from './cases/audit-append.cases.js';
import { listingCases } from './cases/listing.cases.js';
import { limitChangeCases } from './cases/limit-changes.cases.js';
import { limitUnchangedCases } from './cases/limit-unchanged.cases.js';
import { rateLimitCases } from './cases/rate-limit.cases.js';
import { observerCases } from './cases/observer.cases.js';
import { observerListCases } from './cases/observer-list.cases.js';
import { maintenanceCases } from './cases/maintenance.cases.js';
import { nodeRegistryCases } from './cases/node-registry.cases.js';
import { scheduleListCases } from './cases/schedule-list.cases.js';
import { retentionCases } from './cases/retention.cases.js';
import { enqueueCases } from './cases/enqueue.cases.js';
import { fenceCases } from './cases/fence.cases.js';
import { completeAndClaimCases } from './cases/complete-and-claim.cases.js';
import { foreignIdCases } from './cases/foreign-id.cases.js';
import { leaseCases } from './cases/lease.cases.js';
import { discardCases } from './cases/discard.cases.js';
import { traceContextCases } from './cases/trace-context.cases.js';
import { progressCases } from './cases/progress.cases.js';
import { operatorCases } from './cases/operator.cases.js';
import { operatorPageCases } from './cases/operator-pages.cases.js';
import { operatorReadCases } from './cases/operator-reads.cases.js';
import { retryCases } from './cases/retry.cases.js';
import { snoozeCases } from './cases/snooze.cases.js';
import { windowCases } from './cases/window.cases.js';
import { sequenceCases } from './cases/sequence.cases.js';
import { batchCases } from './cases/batch.cases.js';
import { batchHandlerCases } from './cases/batch-handler.cases.js';
import { runNowCases } from './cases/run-now.cases.js';
import { scheduleCases } from './cases/schedule.cases.js';
import { scheduleOutageCases } from './cases/schedule-outage.cases.js';
import { transactionalEnqueueCases } from './cases/transactional-enqueue.cases.js';
import { uniqueKeyCases } from './cases/unique-key.cases.js';
import { enqueueRetryCases } from './cases/enqueue-retry.cases.js';

/**
 * The storage contract as executable cases. Each adapter runs exactly this suite from a thin spec
 * file; where adapters legitimately differ, a case branches on a declared capability and asserts
 * the behaviour of both branches.
 */
export function runConformanceSuite(createTarget: () => Promise<ConformanceTarget>): void {
  let target: ConformanceTarget | undefined;
  const ctx: SuiteContext = {
    open: (options) => target!.open(options),
    name: () => target!.name,
  };

  beforeAll(async () => {
    target = await createTarget();
  });
  afterEach(async () => {
    await target?.cleanup?.();
  });
  afterAll(async () => {
    await target?.teardown();
  });

  describe('enqueue', () => enqueueCases(ctx));
  describe('ids of any version and variant', () => foreignIdCases(ctx));
  describe('claim', () => claimCases(ctx));
  describe('priorities', () => priorityCases(ctx));
  describe('claims past held-back jobs', () => heldBackCases(ctx));
  describe('fair groups', () => groupCases(ctx));
  describe('groups listing', () => groupListCases(ctx));
  describe('the fenced outcome write', () => fenceCases(ctx));
  describe('outcomes and a claim in one call', () => completeAndClaimCases(ctx));
  describe("a batch handler's call", () => batchHandlerCases(ctx));
  describe('the lean finish', () => leanFinishCases(ctx));
  describe('leases, heartbeats and the sweep', () => leaseCases(ctx));
  describe('retry schedule', () => retryCases(ctx));
  describe('snooze', () => snoozeCases(ctx));
  describe('debounce and throttle windows', () => windowCases(ctx));
  describe('operator actions and listings', () => operatorCases(ctx));
  describe('run now', () => runNowCases(ctx));
  describe('job statuses and waiting for a result', () => jobWaitCases(ctx));
  describe('discarding dead letters', () => discardCases(ctx));
  describe('trace context', () => traceContextCases(ctx));
  describe('progress', () => progressCases(ctx));
  describe('job listings in pages', () => listingCases(ctx));
  describe('job counts', () => jobCountCases(ctx));
  describe('operator reads: edges, limit holders, due work, throughput', () => operatorReadCases(ctx));
  describe('operator pages: queues, totals, history, limits', () => operatorPageCases(ctx));
  describe('transactional enqueue', () => transactionalEnqueueCases(ctx));
  describe('recurring schedules', () => scheduleCases(ctx));
  describe('recurring schedules after a long outage', () => scheduleOutageCases(ctx));
  describe('dependencies', () => dependencyCases(ctx));
  describe('dependency batches', () => dependencyBatchCases(ctx));
  describe('dependency cascades', () => dependencyCascadeCases(ctx));
  describe('dependencies enqueued while their parents finish', () => dependencyRaceCases(ctx));
  describe('sequences', () => sequenceCases(ctx));
  describe('batches', () => batchCases(ctx));
  describe('concurrency limits', () => limitCases(ctx));
  describe('concurrency limits changed while jobs run', () => limitChangeCases(ctx));
  describe('rate limits', () => rateLimitCases(ctx));
  describe('limits set to what they are', () => limitUnchangedCases(ctx));
  describe('transition history and observer cursors', () => historyCases(ctx));
  describe('the history read whole, job by job', () => historyScanCases(ctx));
  describe('the audit log appended to and read by action', () => auditAppendCases(ctx));
  describe('observer delivery', () => observerCases(ctx));
  describe('observer status for operators', () => observerListCases(ctx));
  describe('retention', () => retentionCases(ctx));
  describe('maintenance leases and the bounded history trim', () => maintenanceCases(ctx));
  describe('the node registry', () => nodeRegistryCases(ctx));
  describe('schedule pages', () => scheduleListCases(ctx));
  describe('bad input', () => badInputCases(ctx));
  describe('unknown option keys and limit targets', () => optionKeyCases(ctx));
  describe('unique jobs', () => uniqueKeyCases(ctx));
  describe('retry per enqueue', () => enqueueRetryCases(ctx));
  describe('payloads read once', () => jsonWalkCases(ctx));
}
