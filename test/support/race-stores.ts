import { afterAll, beforeAll } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { PostgresJobStore, type PostgresJobStoreOptions } from '../../lib/store/index.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from './postgres.js';

/**
 * PostgreSQL stores for a spec that forces interleavings: a pool for the racing sessions
 * (`dataSource`), a connection of its own to watch their lock waits (`admin`), and a fresh schema
 * per store, all dropped when the file ends. Call it in a describe block.
 */
export function raceStores(prefix: string) {
  const schemas: string[] = [];
  let dataSource: DataSource | undefined;
  let admin: DataSource | undefined;
  beforeAll(async () => {
    dataSource = await openPostgresDataSource(8);
    admin = await openPostgresDataSource(1);
  });
  afterAll(async () => {
    await dropSchemas(admin!, schemas);
    await admin!.destroy();
    await dataSource!.destroy();
  });
  return {
    get dataSource(): DataSource {
      return dataSource!;
    },
    get admin(): DataSource {
      return admin!;
    },
    /** A migrated store on a schema of its own. */
    async open(options: Omit<PostgresJobStoreOptions, 'dataSource' | 'schema'> = {}): Promise<PostgresJobStore> {
      const schema = uniqueSchema(prefix);
      schemas.push(schema);
      const store = new PostgresJobStore({ dataSource: dataSource!, schema, ...options });
      await store.migrate();
      return store;
    },
  };
}
