import { assertUuid, type JobRecord } from '../../core/index.js';
import { normalizeEnqueueMany } from '../enqueue-input.js';
import { batchResult, planBatch } from '../batch/batch-enqueue.js';
import type {
  AttemptTransaction,
  ClaimParams,
  CompleteAndClaimParams,
  CompleteAndClaimResult,
  CompleteParams,
  EnqueueBatchParams,
  EnqueueBatchResult,
  EnqueueManyParams,
  EnqueueParams,
  EnqueueResult,
  HeartbeatParams,
  HeartbeatResult,
  NodeBeatParams,
  NodeRef,
  OutcomeResult,
  ParentOutput,
  ParentOutputParams,
  ProducerStore,
  RelinquishParams,
  WakeHintParams,
  WakeSubscription,
  WorkerStore,
} from '../job-store.types.js';
import { CheckedBase } from './checked-base.js';
import { checkNodeBeatParams, checkNodeRef } from './node-params.js';
import { checkClaimParams, checkCompleteParams, checkHeartbeatParams, checkRelinquishParams, paramsOf } from './store-params.js';

/** `CheckedStore`'s hot path: the worker's claims, leases and outcomes, and the producer's enqueue. */
export class CheckedWorker extends CheckedBase implements WorkerStore, ProducerStore {
  beginAttempt(): AttemptTransaction {
    return this.driver.beginAttempt({
      checkSuccess: (workerId, jobId, attempt, output) =>
        checkCompleteParams({ workerId, outcomes: [{ jobId, attempt, kind: 'succeeded', output }] }, this.limits),
    });
  }

  async subscribeWakeHints(params: WakeHintParams): Promise<WakeSubscription> {
    return this.driver.subscribeWakeHints(paramsOf('subscribeWakeHints', params, '{ listener }').listener);
  }

  async jobEnqueue(params: EnqueueParams): Promise<EnqueueResult> {
    const { job, manager } = paramsOf('jobEnqueue', params, '{ job, manager? }');
    const [result] = await this.jobEnqueueMany({ jobs: [job], manager });
    return result!;
  }

  async jobEnqueueMany(params: EnqueueManyParams): Promise<EnqueueResult[]> {
    const { jobs, manager } = paramsOf('jobEnqueueMany', params, '{ jobs, manager? }');
    return this.driver.jobEnqueueMany({ jobs: normalizeEnqueueMany(jobs, this.limits), manager });
  }

  async jobEnqueueBatch(params: EnqueueBatchParams): Promise<EnqueueBatchResult> {
    const { manager, ...batch } = paramsOf('jobEnqueueBatch', params, '{ jobs, onSuccess?, onComplete?, onFailure?, manager? }');
    const plan = planBatch(batch, this.limits);
    return batchResult(plan, await this.driver.jobEnqueueMany({ jobs: plan.jobs, manager }));
  }

  async jobClaim(params: ClaimParams): Promise<JobRecord[]> {
    return this.driver.jobClaim(checkClaimParams(params));
  }

  async jobHeartbeat(params: HeartbeatParams): Promise<HeartbeatResult> {
    return this.driver.jobHeartbeat(checkHeartbeatParams(params, this.limits));
  }

  async jobCompleteMany(params: CompleteParams): Promise<OutcomeResult[]> {
    return this.driver.jobCompleteMany(checkCompleteParams(params, this.limits));
  }

  /**
   * Both checks run before anything is written. A driver that cannot do both in one round trip
   * gets the two calls in turn; a claim that fails after the outcomes were written is reported in
   * `claimError`, never thrown, so the caller does not send applied outcomes again.
   */
  async jobCompleteAndClaim(params: CompleteAndClaimParams): Promise<CompleteAndClaimResult> {
    const { workerId, outcomes, claim } = paramsOf('jobCompleteAndClaim', params, '{ workerId, outcomes, claim }');
    const complete = checkCompleteParams({ workerId, outcomes }, this.limits);
    const claimParams = checkClaimParams({ ...paramsOf('jobCompleteAndClaim claim', claim, '{ limit, queues, leaseMs, includeLapsed? }'), workerId });
    if (this.driver.jobCompleteAndClaim) return this.driver.jobCompleteAndClaim({ ...complete, claim: claimParams });
    const results = complete.outcomes.length === 0 ? [] : await this.driver.jobCompleteMany(complete);
    try {
      return { results, jobs: await this.driver.jobClaim(claimParams) };
    } catch (claimError) {
      return { results, jobs: [], claimError };
    }
  }

  async jobRelinquishMany(params: RelinquishParams): Promise<OutcomeResult[]> {
    return this.driver.jobRelinquishMany(checkRelinquishParams(params));
  }

  async jobParentOutput(params: ParentOutputParams): Promise<ParentOutput> {
    const { jobId, ancestorId } = paramsOf('jobParentOutput', params, '{ jobId, ancestorId }');
    return this.driver.jobParentOutput({ jobId: assertUuid(jobId, 'jobId'), ancestorId: assertUuid(ancestorId, 'ancestorId') });
  }

  async nodeBeat(params: NodeBeatParams): Promise<void> {
    return this.driver.nodeBeat(checkNodeBeatParams(params));
  }

  async nodeStop(params: NodeRef): Promise<void> {
    return this.driver.nodeStop({ id: checkNodeRef('nodeStop', params) });
  }
}
