import type { FinishMode } from '../../core/index.js';
import type { PostgresNaming } from './postgres-naming.js';
import { claimLimitedQuery } from './queries/claim-limited.query.js';
import { claimUnlimitedQuery } from './queries/claim-unlimited.query.js';
import { completeAndClaimLanesQuery, completeAndClaimQuery } from './queries/complete-and-claim.query.js';
import { claimLanesQuery } from './queries/claim-lanes-fair.query.js';
import { completeJobsQuery } from './queries/complete-jobs.query.js';
import { databaseNowQuery } from './queries/database-now.query.js';
import { deleteScheduleQuery } from './queries/delete-schedule.query.js';
import { advanceSchedulesQuery } from './queries/advance-schedules.query.js';
import { dueSchedulesQuery } from './queries/due-schedules.query.js';
import { enqueueJobsQuery } from './queries/enqueue-jobs.query.js';
import { expireLeasesQuery } from './queries/expire-leases.query.js';
import { foldJobCountsQuery } from './queries/fold-job-counts.query.js';
import { getJobQuery } from './queries/get-job.query.js';
import { jobStatusManyQuery } from './queries/job-status-many.query.js';
import { getScheduleQuery } from './queries/get-schedule.query.js';
import { heartbeatJobsQuery } from './queries/heartbeat-jobs.query.js';
import { historyReadQuery } from './queries/history-read.query.js';
import { historyTrimQuery } from './queries/history-trim.query.js';
import { insertAuditQuery } from './queries/insert-audit.query.js';
import { insertScheduleQuery } from './queries/insert-schedule.query.js';
import { jobEdgesQuery } from './queries/job-edges.query.js';
import { jobCountTotalsQuery } from './queries/job-count-totals.query.js';
import { storeHealthQuery } from './queries/store-health.query.js';
import { jobHistoryQuery } from './queries/job-history.query.js';
import { jobStatesQuery } from './queries/job-states.query.js';
import { jobStatsQuery } from './queries/job-stats.query.js';
import { jobThroughputQuery } from './queries/job-throughput.query.js';
import { limitHoldersQuery } from './queries/limit-holders.query.js';
import { listAuditQuery } from './queries/list-audit.query.js';
import { listDeadLetteredQuery } from './queries/list-dead-lettered.query.js';
import { blockedSequencesQuery } from './queries/blocked-sequences.query.js';
import { listGroupsQuery } from './queries/list-groups.query.js';
import { historyScanQuery } from './queries/history-scan.query.js';
import { batchIdsQuery } from './queries/batch-ids.query.js';
import { batchOpenQuery } from './queries/batch-open.query.js';
import { jobBatchQuery } from './queries/job-batch.query.js';
import { sequenceReplayGuardQuery } from './queries/sequence-replay-guard.query.js';
import { sequenceTailQueries } from './queries/sequence-tails.query.js';
import { listJobsQuery } from './queries/list-jobs.query.js';
import { listLimitsQuery } from './queries/list-limits.query.js';
import { listQueuesQuery } from './queries/list-queues.query.js';
import { listSchedulesQuery } from './queries/list-schedules.query.js';
import { listSchedulesPageQuery } from './queries/list-schedules-page.query.js';
import { lockScheduleQuery } from './queries/lock-schedule.query.js';
import { maintenanceLeaseQuery } from './queries/maintenance-lease.query.js';
import { nextDueScheduleQuery } from './queries/next-due-schedule.query.js';
import { listNodesQuery } from './queries/list-nodes.query.js';
import { listObserversQuery } from './queries/list-observers.query.js';
import { nodeBeatQuery } from './queries/node-beat.query.js';
import { nodeStopQuery } from './queries/node-stop.query.js';
import { pruneNodesQuery } from './queries/prune-nodes.query.js';
import { observerCommitQuery } from './queries/observer-commit.query.js';
import { observerFailQuery } from './queries/observer-fail.query.js';
import { observerLeaseQuery } from './queries/observer-lease.query.js';
import { operatorTransitionQuery } from './queries/operator-transition.query.js';
import { parentOutputQuery } from './queries/parent-output.query.js';
import { provisionPendingLimitsQuery } from './queries/provision-pending-limits.query.js';
import { purgeJobsQuery } from './queries/purge-jobs.query.js';
import { queueOldestDueQuery } from './queries/queue-oldest-due.query.js';
import { reactivateScheduleQuery } from './queries/reactivate-schedule.query.js';
import { relinquishJobsQuery } from './queries/relinquish-jobs.query.js';
import { schemaVersionQuery } from './queries/schema-version.query.js';
import { setLimitQuery } from './queries/set-limit.query.js';
import { setRateLimitQuery } from './queries/set-rate-limit.query.js';
import { declareRateLimitsQuery } from './queries/declare-rate-limits.query.js';
import { rateLimitReadsQuery } from './queries/rate-limit-reads.query.js';
import { setQueuePausedQuery } from './queries/set-queue-paused.query.js';
import { settleDependenciesQuery } from './queries/settle-dependencies.query.js';
import { uniqueEnqueueQueries } from './queries/unique-enqueue.query.js';
import { uniqueReplayHolderQuery } from './queries/unique-replay-holder.query.js';
import { updateScheduleQuery } from './queries/update-schedule.query.js';
import { waitForParentQuery } from './queries/wait-for-parent.query.js';

/**
 * Every statement of one PostgreSQL installation, built once from its naming. Each member is the
 * function of one query file (queries/), which holds its SQL and says why it is written so.
 */
export interface PostgresStatements {
  // Enqueue
  readonly enqueue: ReturnType<typeof enqueueJobsQuery>;
  readonly jobStates: ReturnType<typeof jobStatesQuery>;
  readonly waitForParent: ReturnType<typeof waitForParentQuery>;
  readonly unique: ReturnType<typeof uniqueEnqueueQueries>;
  // Claim, lease, outcome
  readonly claimUnlimited: ReturnType<typeof claimUnlimitedQuery>;
  readonly claimLimited: ReturnType<typeof claimLimitedQuery>;
  readonly claimLanes: ReturnType<typeof claimLanesQuery>;
  readonly heartbeat: ReturnType<typeof heartbeatJobsQuery>;
  readonly complete: ReturnType<typeof completeJobsQuery>;
  readonly completeAndClaim: ReturnType<typeof completeAndClaimQuery>;
  readonly completeAndClaimLanes: ReturnType<typeof completeAndClaimLanesQuery>;
  readonly relinquish: ReturnType<typeof relinquishJobsQuery>;
  readonly expire: ReturnType<typeof expireLeasesQuery>;
  // Reads and operator actions
  readonly get: ReturnType<typeof getJobQuery>;
  readonly statusMany: ReturnType<typeof jobStatusManyQuery>;
  readonly list: ReturnType<typeof listJobsQuery>;
  readonly deadLettered: ReturnType<typeof listDeadLetteredQuery>;
  readonly blockedSequences: ReturnType<typeof blockedSequencesQuery>;
  readonly groups: ReturnType<typeof listGroupsQuery>;
  readonly historyScan: ReturnType<typeof historyScanQuery>;
  readonly batch: ReturnType<typeof jobBatchQuery>;
  readonly batchIds: ReturnType<typeof batchIdsQuery>;
  readonly batchOpen: ReturnType<typeof batchOpenQuery>;
  readonly sequences: ReturnType<typeof sequenceTailQueries>;
  readonly setPaused: ReturnType<typeof setQueuePausedQuery>;
  readonly listQueues: ReturnType<typeof listQueuesQuery>;
  readonly operator: ReturnType<typeof operatorTransitionQuery>;
  readonly uniqueReplayHolder: ReturnType<typeof uniqueReplayHolderQuery>;
  readonly sequenceReplayGuard: ReturnType<typeof sequenceReplayGuardQuery>;
  // Dependencies and limits
  readonly parentOutput: ReturnType<typeof parentOutputQuery>;
  readonly settle: ReturnType<typeof settleDependenciesQuery>;
  readonly setLimit: ReturnType<typeof setLimitQuery>;
  readonly provisionPendingLimits: ReturnType<typeof provisionPendingLimitsQuery>;
  readonly listLimits: ReturnType<typeof listLimitsQuery>;
  readonly setRateLimit: ReturnType<typeof setRateLimitQuery>;
  readonly declareRateLimits: ReturnType<typeof declareRateLimitsQuery>;
  readonly rateLimits: ReturnType<typeof rateLimitReadsQuery>;
  // History, observers, retention
  readonly history: ReturnType<typeof jobHistoryQuery>;
  readonly historyRead: ReturnType<typeof historyReadQuery>;
  readonly historyTrim: ReturnType<typeof historyTrimQuery>;
  readonly observerLease: ReturnType<typeof observerLeaseQuery>;
  readonly observerCommit: ReturnType<typeof observerCommitQuery>;
  readonly observerFail: ReturnType<typeof observerFailQuery>;
  readonly listObservers: ReturnType<typeof listObserversQuery>;
  readonly purge: ReturnType<typeof purgeJobsQuery>;
  readonly foldCounts: ReturnType<typeof foldJobCountsQuery>;
  readonly maintenanceLease: ReturnType<typeof maintenanceLeaseQuery>;
  // Schedules
  readonly databaseNow: ReturnType<typeof databaseNowQuery>;
  readonly lockSchedule: ReturnType<typeof lockScheduleQuery>;
  readonly getSchedule: ReturnType<typeof getScheduleQuery>;
  readonly listSchedules: ReturnType<typeof listSchedulesQuery>;
  readonly listSchedulesPage: ReturnType<typeof listSchedulesPageQuery>;
  readonly dueSchedules: ReturnType<typeof dueSchedulesQuery>;
  readonly insertSchedule: ReturnType<typeof insertScheduleQuery>;
  readonly updateSchedule: ReturnType<typeof updateScheduleQuery>;
  readonly advanceSchedules: ReturnType<typeof advanceSchedulesQuery>;
  readonly deleteSchedule: ReturnType<typeof deleteScheduleQuery>;
  readonly nextDueSchedule: ReturnType<typeof nextDueScheduleQuery>;
  readonly reactivateSchedule: ReturnType<typeof reactivateScheduleQuery>;
  // Operator reads and the audit log
  readonly jobStats: ReturnType<typeof jobStatsQuery>;
  readonly jobCountTotals: ReturnType<typeof jobCountTotalsQuery>;
  readonly storeHealth: ReturnType<typeof storeHealthQuery>;
  readonly jobEdges: ReturnType<typeof jobEdgesQuery>;
  readonly limitHolders: ReturnType<typeof limitHoldersQuery>;
  readonly queueOldestDue: ReturnType<typeof queueOldestDueQuery>;
  readonly throughput: ReturnType<typeof jobThroughputQuery>;
  readonly schemaVersion: ReturnType<typeof schemaVersionQuery>;
  readonly insertAudit: ReturnType<typeof insertAuditQuery>;
  readonly listAudit: ReturnType<typeof listAuditQuery>;
  // The node registry
  readonly nodeBeat: ReturnType<typeof nodeBeatQuery>;
  readonly nodeStop: ReturnType<typeof nodeStopQuery>;
  readonly listNodes: ReturnType<typeof listNodesQuery>;
  readonly pruneNodes: ReturnType<typeof pruneNodesQuery>;
}

/**
 * Builds the statements of the installation `t` names; `asyncClaimCommit` and `finish` as in
 * PostgresJobStoreOptions, and `releasing` when the store polls alone (outcome-results.ts).
 */
export function postgresStatements(
  t: PostgresNaming,
  options: { readonly asyncClaimCommit: boolean; readonly finish: FinishMode; readonly releasing?: boolean },
): PostgresStatements {
  const claim = { asyncCommit: options.asyncClaimCommit };
  return {
    enqueue: enqueueJobsQuery(t),
    jobStates: jobStatesQuery(t),
    waitForParent: waitForParentQuery(t),
    unique: uniqueEnqueueQueries(t),
    claimUnlimited: claimUnlimitedQuery(t, claim),
    claimLimited: claimLimitedQuery(t, claim),
    claimLanes: claimLanesQuery(t, claim),
    heartbeat: heartbeatJobsQuery(t),
    complete: completeJobsQuery(t, options.finish, options.releasing),
    completeAndClaim: completeAndClaimQuery(t, options.finish, options.releasing),
    completeAndClaimLanes: completeAndClaimLanesQuery(t, options.finish, options.releasing),
    relinquish: relinquishJobsQuery(t),
    expire: expireLeasesQuery(t),
    get: getJobQuery(t),
    statusMany: jobStatusManyQuery(t),
    list: listJobsQuery(t),
    deadLettered: listDeadLetteredQuery(t),
    blockedSequences: blockedSequencesQuery(t),
    groups: listGroupsQuery(t),
    historyScan: historyScanQuery(t),
    batch: jobBatchQuery(t),
    batchIds: batchIdsQuery(t),
    batchOpen: batchOpenQuery(t),
    sequences: sequenceTailQueries(t),
    setPaused: setQueuePausedQuery(t),
    listQueues: listQueuesQuery(t),
    operator: operatorTransitionQuery(t),
    uniqueReplayHolder: uniqueReplayHolderQuery(t),
    sequenceReplayGuard: sequenceReplayGuardQuery(t),
    parentOutput: parentOutputQuery(t),
    settle: settleDependenciesQuery(t),
    setLimit: setLimitQuery(t),
    provisionPendingLimits: provisionPendingLimitsQuery(t),
    listLimits: listLimitsQuery(t),
    setRateLimit: setRateLimitQuery(t),
    declareRateLimits: declareRateLimitsQuery(t),
    rateLimits: rateLimitReadsQuery(t),
    history: jobHistoryQuery(t),
    historyRead: historyReadQuery(t),
    historyTrim: historyTrimQuery(t),
    observerLease: observerLeaseQuery(t),
    observerCommit: observerCommitQuery(t),
    observerFail: observerFailQuery(t),
    listObservers: listObserversQuery(t),
    purge: purgeJobsQuery(t),
    foldCounts: foldJobCountsQuery(t),
    maintenanceLease: maintenanceLeaseQuery(t),
    databaseNow: databaseNowQuery(),
    lockSchedule: lockScheduleQuery(t),
    getSchedule: getScheduleQuery(t),
    listSchedules: listSchedulesQuery(t),
    listSchedulesPage: listSchedulesPageQuery(t),
    dueSchedules: dueSchedulesQuery(t),
    insertSchedule: insertScheduleQuery(t),
    updateSchedule: updateScheduleQuery(t),
    advanceSchedules: advanceSchedulesQuery(t),
    deleteSchedule: deleteScheduleQuery(t),
    nextDueSchedule: nextDueScheduleQuery(t),
    reactivateSchedule: reactivateScheduleQuery(t),
    jobStats: jobStatsQuery(t),
    jobCountTotals: jobCountTotalsQuery(t),
    storeHealth: storeHealthQuery(t),
    jobEdges: jobEdgesQuery(t),
    limitHolders: limitHoldersQuery(t),
    queueOldestDue: queueOldestDueQuery(t),
    throughput: jobThroughputQuery(t),
    schemaVersion: schemaVersionQuery(t),
    insertAudit: insertAuditQuery(t),
    listAudit: listAuditQuery(t),
    nodeBeat: nodeBeatQuery(t),
    nodeStop: nodeStopQuery(t),
    listNodes: listNodesQuery(t),
    pruneNodes: pruneNodesQuery(t),
  };
}
