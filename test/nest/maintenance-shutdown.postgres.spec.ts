import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Module, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { SchedulerModule, SchedulerOrchestrator } from '../../lib/index.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

/** Everything Nest's logger reports, by level. */
class CapturingLogger implements LoggerService {
  readonly lines: Array<[level: string, message: string]> = [];
  log(message: unknown) {
    this.lines.push(['log', String(message)]);
  }
  warn(message: unknown) {
    this.lines.push(['warn', String(message)]);
  }
  error(message: unknown) {
    this.lines.push(['error', String(message)]);
  }
  debug(message: unknown) {
    this.lines.push(['debug', String(message)]);
  }
  verbose() {}
}

/** Polls the server until `probe` finds what it looks for (server-side state, not a timer the test owns). */
async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('shutdown during a maintenance sweep, on PostgreSQL', () => {
  const schema = uniqueSchema('sweep_close');
  let admin: DataSource;

  beforeAll(async () => {
    admin = await openPostgresDataSource(1);
  });

  afterAll(async () => {
    await dropSchemas(admin, [schema]);
    await admin.destroy();
  });

  it('app.close() waits for the sweep statement in flight, sends no other, and closes without a warning', async () => {
    @Module({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: databaseUrl(), extra: { max: 6, application_name: 'sweep-close' } }),
        SchedulerModule.forRoot({ schema, concurrency: 2, maintenanceIntervalMs: 100, pollIntervalMs: 3_600_000, scheduling: false }),
      ],
    })
    class AppModule {}
    const logger = new CapturingLogger();
    const app = await NestFactory.createApplicationContext(AppModule, { logger });
    const dataSource = app.get(DataSource);
    const { node } = app.get(SchedulerOrchestrator);

    // Another session holds the sweep's lease row, so the next sweep's first statement waits on it.
    const blocker = new pg.Client({ connectionString: databaseUrl() });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT * FROM "${schema}"."maintenance" WHERE task = 'sweep' FOR UPDATE`);
      const waiting = await until(async () => {
        const rows = await admin.query(
          `SELECT pid FROM pg_stat_activity WHERE application_name = 'sweep-close' AND wait_event_type = 'Lock' AND query LIKE '%maintenance%'`,
        );
        return rows[0]?.pid as number | undefined;
      });

      let closed = false;
      const closing = app.close().then(() => (closed = true));
      // The node has stopped (no timer, claim or batch left to start) and waits only for the sweep's
      // statement in flight, which cannot finish while the lock is held: the close must wait for it.
      await until(async () => (node.status === 'stopped' ? true : undefined));
      expect((await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = $2', [waiting, 'Lock'])).length).toBe(1);
      expect(closed).toBe(false);
      await blocker.query('ROLLBACK');
      await closing;
    } finally {
      await blocker.end();
    }

    expect(dataSource.isInitialized).toBe(false);
    // No statement of the sweep reached the pool after it ended, and nothing was reported as failed.
    expect(logger.lines.filter(([level]) => level === 'warn' || level === 'error')).toEqual([]);
    expect(logger.lines.filter(([, message]) => /maintenance|Cannot use a pool/.test(message))).toEqual([]);
  }, 30_000);
});
