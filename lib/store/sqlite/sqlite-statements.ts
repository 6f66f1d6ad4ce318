import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from './sqlite-naming.js';
import { claimLimitedQuery } from './queries/claim-limited.query.js';
import { claimUnlimitedQuery } from './queries/claim-unlimited.query.js';
import { completeJobsQuery } from './queries/complete-jobs.query.js';
import { databaseNowQuery } from './queries/database-now.query.js';
import { deleteScheduleQuery } from './queries/delete-schedule.query.js';
import { advanceSchedulesQuery } from './queries/advance-schedules.query.js';
import { dueSchedulesQuery } from './queries/due-schedules.query.js';
import { enqueueJobsQuery } from './queries/enqueue-jobs.query.js';
import { expireLeasesQuery } from './queries/expire-leases.query.js';
import { getJobQuery } from './queries/get-job.query.js';
import { jobStatusManyQuery } from './queries/job-status-many.query.js';
import { getScheduleQuery } from './queries/get-schedule.query.js';
import { hasOpenEdgesQuery } from './queries/has-open-edges.query.js';
import { heartbeatJobsQuery } from './queries/heartbeat-jobs.query.js';
import { historyReadQuery } from './queries/history-read.query.js';
import { historyTrimQuery } from './queries/history-trim.query.js';
import { maintenanceLeaseQuery } from './queries/maintenance-lease.query.js';
import { insertAuditQuery } from './queries/insert-audit.query.js';
import { insertScheduleQuery } from './queries/insert-schedule.query.js';
import { jobEdgesQuery } from './queries/job-edges.query.js';
import { jobCountTotalsQuery } from './queries/job-count-totals.query.js';
import { jobHistoryQuery } from './queries/job-history.query.js';
import { jobStateQuery } from './queries/job-state.query.js';
import { jobStatsQuery } from './queries/job-stats.query.js';
import { jobThroughputQuery } from './queries/job-throughput.query.js';
import { limitHoldersQuery } from './queries/limit-holders.query.js';
import { limitsExistQuery } from './queries/limits-exist.query.js';
import { listAuditQuery } from './queries/list-audit.query.js';
import { listDeadLetteredQuery } from './queries/list-dead-lettered.query.js';
import { blockedSequencesQuery } from './queries/blocked-sequences.query.js';
import { listGroupsQuery } from './queries/list-groups.query.js';
import { historyScanQuery } from './queries/history-scan.query.js';
import { batchSummaryQuery } from './queries/batch-summary.query.js';
import { batchIdsQuery } from './queries/batch-ids.query.js';
import { batchOpenQuery } from './queries/batch-open.query.js';
import { listJobsQuery } from './queries/list-jobs.query.js';
import { listLimitsQuery } from './queries/list-limits.query.js';
import { listQueuesQuery } from './queries/list-queues.query.js';
import { listSchedulesQuery } from './queries/list-schedules.query.js';
import { queueOldestDueQuery } from './queries/queue-oldest-due.query.js';
import { listSchedulesPageQuery } from './queries/list-schedules-page.query.js';
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
import { purgeJobsQuery } from './queries/purge-jobs.query.js';
import { reactivateScheduleQuery } from './queries/reactivate-schedule.query.js';
import { relinquishJobsQuery } from './queries/relinquish-jobs.query.js';
import { schemaVersionQuery } from './queries/schema-version.query.js';
import { setLimitQuery } from './queries/set-limit.query.js';
import { setRateLimitQuery } from './queries/set-rate-limit.query.js';
import { rateLimitReadsQuery } from './queries/rate-limit-reads.query.js';
import { setQueuePausedQuery } from './queries/set-queue-paused.query.js';
import { settleDependenciesQuery } from './queries/settle-dependencies.query.js';
import { uniqueReplayGuardQuery } from './queries/unique-replay-guard.query.js';
import { sequenceReplayGuardQuery } from './queries/sequence-replay-guard.query.js';
import { updateScheduleQuery } from './queries/update-schedule.query.js';

/**
 * Every prepared statement of one SQLite installation. Each member is the function of one query
 * file (queries/), which holds its SQL. They are prepared together, once the store's tables exist.
 */
export interface SqliteStatements {
  // Enqueue, claim, lease, outcome
  readonly enqueue: ReturnType<typeof enqueueJobsQuery>;
  readonly limitsExist: ReturnType<typeof limitsExistQuery>;
  readonly claimUnlimited: ReturnType<typeof claimUnlimitedQuery>;
  readonly claimLimited: ReturnType<typeof claimLimitedQuery>;
  readonly heartbeat: ReturnType<typeof heartbeatJobsQuery>;
  readonly complete: ReturnType<typeof completeJobsQuery>;
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
  readonly batchSummary: ReturnType<typeof batchSummaryQuery>;
  readonly batchIds: ReturnType<typeof batchIdsQuery>;
  readonly batchOpen: ReturnType<typeof batchOpenQuery>;
  readonly setPaused: ReturnType<typeof setQueuePausedQuery>;
  readonly listQueues: ReturnType<typeof listQueuesQuery>;
  readonly jobStats: ReturnType<typeof jobStatsQuery>;
  readonly jobCountTotals: ReturnType<typeof jobCountTotalsQuery>;
  readonly jobEdges: ReturnType<typeof jobEdgesQuery>;
  readonly limitHolders: ReturnType<typeof limitHoldersQuery>;
  readonly queueOldestDue: ReturnType<typeof queueOldestDueQuery>;
  readonly throughput: ReturnType<typeof jobThroughputQuery>;
  readonly operator: ReturnType<typeof operatorTransitionQuery>;
  readonly uniqueReplayGuard: ReturnType<typeof uniqueReplayGuardQuery>;
  readonly sequenceReplayGuard: ReturnType<typeof sequenceReplayGuardQuery>;
  // Dependencies and limits
  readonly hasOpenEdges: ReturnType<typeof hasOpenEdgesQuery>;
  readonly parentOutput: ReturnType<typeof parentOutputQuery>;
  readonly settle: ReturnType<typeof settleDependenciesQuery>;
  readonly setLimit: ReturnType<typeof setLimitQuery>;
  readonly listLimits: ReturnType<typeof listLimitsQuery>;
  readonly setRateLimit: ReturnType<typeof setRateLimitQuery>;
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
  readonly maintenanceLease: ReturnType<typeof maintenanceLeaseQuery>;
  // Schedules and the audit log
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
  readonly jobState: ReturnType<typeof jobStateQuery>;
  readonly insertAudit: ReturnType<typeof insertAuditQuery>;
  readonly listAudit: ReturnType<typeof listAuditQuery>;
  // The node registry
  readonly nodeBeat: ReturnType<typeof nodeBeatQuery>;
  readonly nodeStop: ReturnType<typeof nodeStopQuery>;
  readonly listNodes: ReturnType<typeof listNodesQuery>;
  readonly pruneNodes: ReturnType<typeof pruneNodesQuery>;
}

/** Prepares the statements of the installation `t` names, on `db`. */
export function sqliteStatements(db: Database, t: SqliteNaming): SqliteStatements {
  return {
    enqueue: enqueueJobsQuery(db, t),
    limitsExist: limitsExistQuery(db, t),
    claimUnlimited: claimUnlimitedQuery(db, t),
    claimLimited: claimLimitedQuery(db, t),
    heartbeat: heartbeatJobsQuery(db, t),
    complete: completeJobsQuery(db, t),
    relinquish: relinquishJobsQuery(db, t),
    expire: expireLeasesQuery(db, t),
    get: getJobQuery(db, t),
    statusMany: jobStatusManyQuery(db, t),
    list: listJobsQuery(db, t),
    deadLettered: listDeadLetteredQuery(db, t),
    blockedSequences: blockedSequencesQuery(db, t),
    groups: listGroupsQuery(db, t),
    historyScan: historyScanQuery(db, t),
    batchSummary: batchSummaryQuery(db, t),
    batchIds: batchIdsQuery(db, t),
    batchOpen: batchOpenQuery(db, t),
    setPaused: setQueuePausedQuery(db, t),
    listQueues: listQueuesQuery(db, t),
    jobStats: jobStatsQuery(db, t),
    jobCountTotals: jobCountTotalsQuery(db, t),
    jobEdges: jobEdgesQuery(db, t),
    limitHolders: limitHoldersQuery(db, t),
    queueOldestDue: queueOldestDueQuery(db, t),
    throughput: jobThroughputQuery(db, t),
    operator: operatorTransitionQuery(db, t),
    uniqueReplayGuard: uniqueReplayGuardQuery(db, t),
    sequenceReplayGuard: sequenceReplayGuardQuery(db, t),
    hasOpenEdges: hasOpenEdgesQuery(db, t),
    parentOutput: parentOutputQuery(db, t),
    settle: settleDependenciesQuery(db, t),
    setLimit: setLimitQuery(db, t),
    listLimits: listLimitsQuery(db, t),
    setRateLimit: setRateLimitQuery(db, t),
    rateLimits: rateLimitReadsQuery(db, t),
    history: jobHistoryQuery(db, t),
    historyRead: historyReadQuery(db, t),
    historyTrim: historyTrimQuery(db, t),
    observerLease: observerLeaseQuery(db, t),
    observerCommit: observerCommitQuery(db, t),
    observerFail: observerFailQuery(db, t),
    listObservers: listObserversQuery(db, t),
    purge: purgeJobsQuery(db, t),
    maintenanceLease: maintenanceLeaseQuery(db, t),
    getSchedule: getScheduleQuery(db, t),
    listSchedules: listSchedulesQuery(db, t),
    listSchedulesPage: listSchedulesPageQuery(db, t),
    dueSchedules: dueSchedulesQuery(db, t),
    insertSchedule: insertScheduleQuery(db, t),
    updateSchedule: updateScheduleQuery(db, t),
    advanceSchedules: advanceSchedulesQuery(db, t),
    deleteSchedule: deleteScheduleQuery(db, t),
    nextDueSchedule: nextDueScheduleQuery(db, t),
    reactivateSchedule: reactivateScheduleQuery(db, t),
    jobState: jobStateQuery(db, t),
    insertAudit: insertAuditQuery(db, t),
    listAudit: listAuditQuery(db, t),
    nodeBeat: nodeBeatQuery(db, t),
    nodeStop: nodeStopQuery(db, t),
    listNodes: listNodesQuery(db, t),
    pruneNodes: pruneNodesQuery(db, t),
  };
}

/**
 * The statements that work before the store's tables exist and on any schema version: the clock,
 * and the schema version that tells what an installation holds. Ready from the store's construction.
 */
export interface SqliteBootStatements {
  readonly now: ReturnType<typeof databaseNowQuery>;
  readonly schemaVersion: ReturnType<typeof schemaVersionQuery>;
}

export function sqliteBootStatements(db: Database, t: SqliteNaming): SqliteBootStatements {
  return { now: databaseNowQuery(db), schemaVersion: schemaVersionQuery(db, t) };
}
