import type { DataSource } from 'typeorm';
import { MysqlJobStore, type MysqlJobStoreOptions } from '../../lib/store/index.js';
import { dropInstallation, openMariadbDataSource } from './mariadb.js';

/** One node of a cluster: its own DataSource (the application's pool) and its own store on the shared tables. */
export interface MariadbNode {
  readonly dataSource: DataSource;
  readonly store: MysqlJobStore;
}

/**
 * Nodes that share one installation (one table prefix), as separate processes would: each with a
 * DataSource and a store of its own, so each has its own sessions and its own pool. Every node
 * migrates at once, as nodes that boot together do (the migration lock lets one apply and the rest
 * find nothing to do); `close` ends every node and drops the tables.
 */
export async function openMariadbNodes(
  count: number,
  prefix: string,
  options: Omit<Partial<MysqlJobStoreOptions>, 'dataSource' | 'tablePrefix' | 'onStatement'> & { readonly onStatement?: (node: number, text: string) => void } = {},
): Promise<{ readonly nodes: MariadbNode[]; close(): Promise<void> }> {
  const { onStatement, ...store } = options;
  const nodes: MariadbNode[] = [];
  for (let i = 0; i < count; i++) {
    const dataSource = await openMariadbDataSource({ poolSize: 2 });
    nodes.push({
      dataSource,
      store: new MysqlJobStore({ poolSize: 2, ...store, dataSource, tablePrefix: prefix, ...(onStatement ? { onStatement: (text) => onStatement(i, text) } : {}) }),
    });
  }
  await Promise.all(nodes.map((node) => node.store.migrate()));
  return {
    nodes,
    async close() {
      await Promise.all(nodes.map((node) => node.store.close()));
      await dropInstallation(nodes[0]!.dataSource, nodes[0]!.store.naming);
      await Promise.all(nodes.map((node) => node.dataSource.destroy()));
    },
  };
}
