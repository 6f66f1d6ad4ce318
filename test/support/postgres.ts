import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';

/** The server the run uses: DATABASE_URL, or the embedded one global setup started. */
export function databaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set; jest global setup should have started an embedded PostgreSQL.');
  return url;
}

/** A fresh, unused schema name, so test files never see each other's tables. */
export function uniqueSchema(prefix = 't'): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export async function openPostgresDataSource(poolSize = 12, url = databaseUrl()): Promise<DataSource> {
  const dataSource = new DataSource({ type: 'postgres', url, extra: { max: poolSize } });
  return dataSource.initialize();
}

export async function dropSchemas(dataSource: DataSource, schemas: Iterable<string>): Promise<void> {
  for (const schema of schemas) await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}
