/**
 * `nestjs-durable-scheduler/terminus`: the scheduler's `@nestjs/terminus` health indicator. Needs
 * `@nestjs/terminus` (an optional peer dependency) and a `SchedulerModule` anywhere in the app.
 */
export { SchedulerHealthIndicator, type SchedulerHealthOptions } from './scheduler-health.indicator.js';
export { SchedulerHealthModule } from './scheduler-health.module.js';
