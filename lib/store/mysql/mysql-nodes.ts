import type { FinishMode } from '../../core/index.js';
import type { DriverNodeBeatParams } from '../checked/store-driver.js';
import type { NodeRecord } from '../job-store.types.js';
import type { MysqlConnections } from './mysql-connections.js';
import type { MysqlNaming } from './mysql-naming.js';
import { listNodesQuery } from './queries/list-nodes.query.js';
import { nodeBeatQuery } from './queries/node-beat.query.js';
import { nodeStopQuery } from './queries/node-stop.query.js';
import { pruneNodesQuery } from './queries/prune-nodes.query.js';

// The node registry on the MySQL store, as MysqlDriver's methods of the same names: each one
// statement on a session of the store's, stamped with the database's clock.

/** Upserts the node's row; `finish` is the store's finish mode, which the row records. */
export async function nodeBeat(conns: MysqlConnections, naming: MysqlNaming, node: DriverNodeBeatParams, finish: FinishMode): Promise<void> {
  const beat = nodeBeatQuery(naming);
  await conns.session((db) => beat(db, node, finish));
}

/** Marks a registered node that has not stopped yet as stopped now. */
export async function nodeStop(conns: MysqlConnections, naming: MysqlNaming, { id }: { readonly id: string }): Promise<void> {
  const stop = nodeStopQuery(naming);
  await conns.session((db) => stop(db, id));
}

/** Registry rows most recently seen first (ties by id, descending), seen at or after `seenSince` when given. */
export async function nodeList(conns: MysqlConnections, naming: MysqlNaming, { seenSince, limit }: { readonly seenSince: Date | null; readonly limit: number }): Promise<NodeRecord[]> {
  const list = listNodesQuery(naming);
  return conns.session((db) => list(db, seenSince, limit));
}

/** Deletes up to `limit` rows last seen more than `olderThanMs` ago, oldest first; returns how many. */
export async function nodePrune(conns: MysqlConnections, naming: MysqlNaming, { olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
  const prune = pruneNodesQuery(naming);
  return conns.session((db) => prune(db, olderThanMs, limit));
}
