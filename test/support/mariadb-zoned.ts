import { DataSource } from 'typeorm';
import { mariadbUrl } from './mariadb.js';

interface Pool {
  on(event: 'connection', listener: (connection: { query(sql: string, values: unknown[], callback: (error: unknown) => void): void }) => void): unknown;
  getConnection(callback: (error: unknown, connection: { release(): void }) => void): void;
  end(callback: () => void): void;
}

interface PoolingDriver {
  readonly mysql: { createPool(options: object): Pool };
  createPool(options: object): Promise<Pool>;
}

/**
 * A DataSource on the suites' server whose every session runs at the time zone `zone`, as an
 * application's may (a `SET time_zone` in its pool setup), and whose mysql2 driver converts Dates
 * at that zone too (`timezone`, which defaults to the process's zone). mysql2 has no setup
 * statement option, so the DataSource's pool is built here with a `connection` hook, before its
 * first session opens (TypeORM opens one inside createPool to check the credentials).
 */
export async function openZonedDataSource(zone: string, poolSize = 2): Promise<DataSource> {
  const dataSource = new DataSource({ type: 'mariadb', url: mariadbUrl(), poolSize, timezone: zone });
  const driver = dataSource.driver as unknown as PoolingDriver;
  driver.createPool = (options) => {
    const pool = driver.mysql.createPool(options);
    pool.on('connection', (connection) => connection.query('SET time_zone = ?', [zone], () => undefined));
    return new Promise((resolve, reject) =>
      pool.getConnection((error, connection) => {
        if (error) return pool.end(() => reject(error));
        connection.release();
        resolve(pool);
      }),
    );
  };
  return dataSource.initialize();
}
