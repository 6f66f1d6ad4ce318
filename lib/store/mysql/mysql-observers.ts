import type { DriverObserverCommitParams, DriverObserverFailParams, DriverObserverLeaseParams } from '../checked/store-driver.js';
import type { ObserverLease } from '../job-store.types.js';
import type { DriverObserverListParams, DriverObserverStatus } from '../operator-reads.js';
import type { MysqlConnections } from './mysql-connections.js';
import { sequenceHistory } from './mysql-history-sequencer.js';
import type { MysqlNaming } from './mysql-naming.js';
import { listObserversQuery } from './queries/list-observers.query.js';
import { observerCommitQuery } from './queries/observer-commit.query.js';
import { observerFailQuery } from './queries/observer-fail.query.js';
import { observerLeaseQuery } from './queries/observer-lease.query.js';

// The observers' cursors on the MySQL store, as MysqlDriver's methods of the same names. Positions
// are the sequencer's (mysql-history-sequencer.ts), as historyRead hands them out.

/**
 * Takes an observer's delivery lease. An observer seen for the first time starts at the end of the
 * log, so only then is the sequencer run first: what committed before the lease is behind the new
 * cursor, and what commits after it is ahead.
 */
export async function observerLease(conns: MysqlConnections, naming: MysqlNaming, params: DriverObserverLeaseParams): Promise<ObserverLease | null> {
  const lease = observerLeaseQuery(naming);
  const leased = await conns.transaction((tx) => lease(tx, params, false));
  if (leased !== undefined) return leased;
  await sequenceHistory(conns, naming);
  return (await conns.transaction((tx) => lease(tx, params, true))) ?? null;
}

/** Moves the cursor past delivered entries; false when the worker's lease is gone. */
export async function observerCommit(conns: MysqlConnections, naming: MysqlNaming, { observer, workerId, position }: DriverObserverCommitParams): Promise<boolean> {
  const commit = observerCommitQuery(naming);
  return conns.transaction((tx) => commit(tx, observer, workerId, position));
}

/** Records a failed delivery and frees the lease; false when the worker's lease is gone. */
export async function observerFail(conns: MysqlConnections, naming: MysqlNaming, { observer, workerId, error, retryDelayMs }: DriverObserverFailParams): Promise<boolean> {
  const fail = observerFailQuery(naming);
  return conns.session((db) => fail(db, observer, workerId, error, retryDelayMs));
}

/** The cursors by observer id, each with its lag counted in historyRead's order after numbering what committed. */
export async function observerList(conns: MysqlConnections, naming: MysqlNaming, { limit, lagScan }: DriverObserverListParams): Promise<DriverObserverStatus[]> {
  await sequenceHistory(conns, naming);
  const list = listObserversQuery(naming);
  return conns.session((db) => list(db, limit, lagScan));
}
