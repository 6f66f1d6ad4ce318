import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SchedulerDashboardModule } from '../lib/dashboard/index.js';
import { SchedulerModule, type SchedulerModuleOptions } from '../lib/index.js';
import { LocalOnlyGuard } from './dashboard/local-only.guard.js';
import { sampleDatabase } from './sample-database.js';
import { SAMPLE_ENTITIES, SampleModule } from './sample.module.js';

export interface SampleConfig {
  /** A postgres://, mysql:// or mariadb:// URL; without one the sample uses SQLite. */
  readonly databaseUrl?: string;
  /** The SQLite file, when there is no database URL. */
  readonly sqliteFile: string;
  readonly scheduler?: Partial<SchedulerModuleOptions>;
}

@Module({})
export class AppModule {
  static forRoot(config: SampleConfig): DynamicModule {
    const database = sampleDatabase(config.databaseUrl, config.sqliteFile).options;
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRoot({ ...database, entities: SAMPLE_ENTITIES, synchronize: true }),
        SchedulerModule.forRootAsync({
          isGlobal: true,
          useFactory: (): SchedulerModuleOptions => ({ concurrency: 4, pollIntervalMs: 500, ...config.scheduler }),
        }),
        // The guard trusts the caller's address, which a page whose name is rebound to this machine
        // shares: allowedHosts keeps the dashboard to this machine's own names as well.
        SchedulerDashboardModule.forRoot({ guards: [LocalOnlyGuard], allowedHosts: [], actor: () => 'sample-operator' }),
        SampleModule.forRoot({ observers: config.scheduler?.worker !== false }),
      ],
    };
  }
}
