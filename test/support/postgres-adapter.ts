import { afterAll, beforeAll } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from './postgres.js';

/**
 * The shared setup of the PostgreSQL adapter specs: one DataSource per spec file, the schemas its
 * tests create (dropped after the file), and the stores they build (closed after the file). A spec
 * calls {@link useAdapterDataSource} once at its top level; `dataSource` is set from then on.
 */
export let dataSource: DataSource;
export const schemas: string[] = [];
export const stores: PostgresJobStore[] = [];

/** Registers the file's hooks: open the DataSource before its tests, clean up after them. */
export function useAdapterDataSource(): void {
  beforeAll(async () => {
    dataSource = await openPostgresDataSource();
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await dropSchemas(dataSource, schemas);
    await dataSource.destroy();
  });
}

/** A store on a schema of its own, closed and dropped after the file. */
export function freshStore(options: Omit<ConstructorParameters<typeof PostgresJobStore>[0], 'dataSource' | 'schema'> = {}): PostgresJobStore {
  const schema = uniqueSchema('pga');
  schemas.push(schema);
  const store = new PostgresJobStore({ dataSource, schema, ...options });
  stores.push(store);
  return store;
}
