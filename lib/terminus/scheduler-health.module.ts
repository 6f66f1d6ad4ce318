import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { SchedulerHealthIndicator } from './scheduler-health.indicator.js';

/**
 * Provides {@link SchedulerHealthIndicator} beside `TerminusModule`. Import it in the module whose
 * controller serves the health check; it finds the app's `SchedulerModule` wherever that is.
 */
@Module({
  imports: [TerminusModule],
  providers: [SchedulerHealthIndicator],
  exports: [SchedulerHealthIndicator, TerminusModule],
})
export class SchedulerHealthModule {}
