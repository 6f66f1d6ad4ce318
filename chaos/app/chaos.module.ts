import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SchedulerModule } from '../../lib/index.js';
import type { ChaosConfig } from './chaos-config.js';
import { ChaosTables } from './chaos-tables.js';
import { CHAOS_JOBS } from './chaos.jobs.js';
import { ChaosProducer } from './chaos.producer.js';
import { ExecutionLog } from './execution-log.js';

/**
 * The chaos app: TypeORM on PostgreSQL (or MariaDB, where the module picks the MySQL store and
 * `schema` names the scheduler's database) and the real SchedulerModule. Workers run the scheduler;
 * producers only enqueue (autoStart off). Leases are short (2.5 s by default, a heartbeat every
 * 0.8 s) so that a paused worker loses its lease within the run, and retries are quick so the
 * liveness phase drains in seconds.
 */
@Module({})
export class ChaosModule {
  static forRoot(config: ChaosConfig): DynamicModule {
    const concurrency = config.role === 'worker' ? config.concurrency : 1;
    return {
      module: ChaosModule,
      imports: [
        TypeOrmModule.forRoot(
          config.store === 'mariadb'
            ? {
                type: 'mariadb',
                url: config.databaseUrl,
                // The attempt transactions (concurrency) and the producer's own; the store has a pool of its own.
                poolSize: concurrency + 4,
                retryAttempts: 30,
                retryDelay: 500,
              }
            : {
                type: 'postgres',
                url: config.databaseUrl,
                applicationName: config.name,
                // The pool the scheduler needs (concurrency + 3), plus one for the producer's own transactions.
                extra: { max: concurrency + 4 },
                retryAttempts: 30,
                retryDelay: 500,
              },
        ),
        SchedulerModule.forRoot({
          autoStart: config.role === 'worker',
          schema: config.schedulerSchema,
          workerId: config.name,
          concurrency,
          leaseMs: config.leaseMs,
          heartbeatIntervalMs: Math.floor(config.leaseMs / 3),
          pollIntervalMs: 500,
          // Sweeps that settle lapsed final attempts come seconds apart, as in production, so a
          // late report from a paused worker has a window in which nobody took its job.
          maintenanceIntervalMs: 4_000,
          shutdownGraceMs: 2_000,
          retentionMs: null,
          retry: { baseDelayMs: 100, maxDelayMs: 2_000 },
        }),
      ],
      providers: [
        { provide: ExecutionLog, useValue: new ExecutionLog(config.logFile, config.name) },
        { provide: ChaosTables, useValue: new ChaosTables(config) },
        ...CHAOS_JOBS,
        ChaosProducer,
      ],
    };
  }
}
