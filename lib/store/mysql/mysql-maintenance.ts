import type { HistoryEntry, HistoryTrimResult } from '../job-store.types.js';
import type { MysqlConnections } from './mysql-connections.js';
import { sequenceHistory } from './mysql-history-sequencer.js';
import type { MysqlNaming } from './mysql-naming.js';
import { foldJobCountsQuery } from './queries/fold-job-counts.query.js';
import { historyReadQuery } from './queries/history-read.query.js';
import { historyTrimQuery } from './queries/history-trim.query.js';
import { maintenanceLeaseQuery } from './queries/maintenance-lease.query.js';
import { purgeJobsQuery } from './queries/purge-jobs.query.js';

// The MySQL store's reads of the history log and its sweep's clean-up steps, one transaction of the
// store's own each (a lost lock runs it again), as MysqlDriver's methods of the same names.

/** The log after `after`, in position order; the sequencer numbers what committed since the last read first. */
export async function historyRead(conns: MysqlConnections, naming: MysqlNaming, { after, limit }: { readonly after: string; readonly limit: number }): Promise<HistoryEntry[]> {
  await sequenceHistory(conns, naming);
  const read = historyReadQuery(naming);
  return conns.session((db) => read(db, after, limit));
}

/** One trim pass (history-trim.query.ts), after numbering what committed since the last read of the log. */
export async function historyTrim(conns: MysqlConnections, naming: MysqlNaming, { keep, limit }: { readonly keep: number; readonly limit: number }): Promise<HistoryTrimResult> {
  await sequenceHistory(conns, naming);
  const trim = historyTrimQuery(naming);
  return conns.transaction((tx) => trim(tx, keep, limit));
}

/** Takes or renews a maintenance task's lease by the database's clock. */
export async function maintenanceLease(
  conns: MysqlConnections,
  naming: MysqlNaming,
  { task, workerId, leaseMs }: { readonly task: string; readonly workerId: string; readonly leaseMs: number },
): Promise<boolean> {
  const lease = maintenanceLeaseQuery(naming);
  return conns.transaction((tx) => lease(tx, task, workerId, leaseMs));
}

/** Deletes succeeded and cancelled jobs finished more than `olderThanMs` ago, with their history and edges. */
export async function jobPurge(conns: MysqlConnections, naming: MysqlNaming, { olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
  const purge = purgeJobsQuery(naming);
  return conns.transaction((tx) => purge(tx, olderThanMs, limit));
}

/** Moves up to `limit` pending count changes into the counts; 0 while another fold runs. */
export async function jobCountsFold(conns: MysqlConnections, naming: MysqlNaming, { limit }: { readonly limit: number }): Promise<number> {
  const fold = foldJobCountsQuery(naming);
  return conns.transaction((tx) => fold(tx, limit));
}
