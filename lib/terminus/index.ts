/**
 * `nestjs-durable-scheduler/terminus`: the scheduler's `@nestjs/terminus` health indicator. Needs
 * `@nestjs/terminus` (an optional peer dependency) and a `SchedulerModule` registered with
 * `isGlobal: true`, or imported where the indicator is provided.
 */
export { SchedulerHealthIndicator, type SchedulerHealthOptions } from './scheduler-health.indicator.js';
export { SchedulerHealthModule } from './scheduler-health.module.js';
