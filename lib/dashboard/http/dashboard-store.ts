import type { OperatorStore, ScheduleStore } from '../../store/index.js';

/** The part of the store contract the dashboard reads and acts through. */
export type DashboardStore = Pick<
  OperatorStore,
  'jobGet' | 'jobListPage' | 'jobListDeadLettered' | 'jobListBlockedSequences' | 'jobListGroups' | 'jobBatch' | 'jobListBatches' | 'jobCancelBatch' | 'jobReplay' | 'jobCancel' | 'jobRunNow' | 'jobHistory' | 'jobCountTotals' | 'storeHealth' | 'queueList' | 'queuePause' | 'queueResume' | 'concurrencyLimitList' | 'rateLimitList' | 'rateLimitStatus' | 'auditList' | 'jobEdges' | 'limitHolders' | 'queueOldestDue' | 'jobThroughput' | 'nodeList' | 'observerList'
> &
  Pick<ScheduleStore, 'scheduleGet' | 'scheduleList' | 'schedulePause' | 'scheduleResume' | 'scheduleTrigger' | 'scheduleReplay'>;
