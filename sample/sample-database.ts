import type { TypeOrmModuleOptions } from '@nestjs/typeorm';
import { InvalidArgumentError } from '../lib/index.js';

/** Where the sample keeps its data: the TypeORM connection, and its name for the startup log. */
export interface SampleDatabase {
  readonly options: TypeOrmModuleOptions;
  readonly shown: string;
}

/**
 * One environment variable picks the server, as `--conn` does for the CLI: DATABASE_URL's scheme
 * says which (postgres://, mysql:// or mariadb://), and without it the sample uses a SQLite file.
 * The scheduler follows the DataSource's type, so nothing else changes between them.
 */
export function sampleDatabase(databaseUrl: string | undefined, sqliteFile: string): SampleDatabase {
  if (!databaseUrl) return { options: { type: 'better-sqlite3', database: sqliteFile }, shown: sqliteFile };
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return { options: { type: 'postgres', url: databaseUrl }, shown: 'PostgreSQL' };
  if (databaseUrl.startsWith('mysql://')) return { options: { type: 'mysql', url: databaseUrl }, shown: 'MySQL' };
  if (databaseUrl.startsWith('mariadb://')) return { options: { type: 'mariadb', url: databaseUrl }, shown: 'MariaDB' };
  throw new InvalidArgumentError('DATABASE_URL must start with postgres://, mysql:// or mariadb://; unset it to run the sample on SQLite.', 'DATABASE_URL');
}
