import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { SchedulerHealthIndicator } from './scheduler-health.indicator.js';

/**
 * Provides {@link SchedulerHealthIndicator} beside `TerminusModule`. Import it next to a
 * `SchedulerModule` registered with `isGlobal: true`.
 */
@Module({
  imports: [TerminusModule],
  providers: [SchedulerHealthIndicator],
  exports: [SchedulerHealthIndicator, TerminusModule],
})
export class SchedulerHealthModule {}
