/**
 * One chaos process: a worker (the scheduler running the chaos handlers) or a producer (enqueues
 * in its own transactions). Started by chaos/run.mjs, which kills, pauses and respawns it.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { SchedulerOrchestrator, type SettledEvent } from '../../lib/index.js';
import { chaosConfig } from './chaos-config.js';
import { ChaosModule } from './chaos.module.js';
import { ChaosProducer } from './chaos.producer.js';
import { ExecutionLog } from './execution-log.js';
import './workload.js';

const config = chaosConfig(process.env);
const app = await NestFactory.createApplicationContext(ChaosModule.forRoot(config), { logger: ['error', 'warn', 'log'] });
const log = app.get(ExecutionLog);

if (config.role === 'worker') {
  // What the store did with each report: applied, stale (the fence refused it) or dropped.
  app.get(SchedulerOrchestrator).node.events.on('settled', (event: SettledEvent) => {
    log.append({ ev: 'settled', job: event.jobId, attempt: event.attempt, kind: event.kind, status: event.status, state: event.state ?? null });
  });
  app.enableShutdownHooks();
  log.append({ ev: 'ready', pid: process.pid });
} else {
  const producer = app.get(ChaosProducer);
  // Each incarnation draws its own stream from the run's seed and its name.
  const seed = [...config.name].reduce((h, ch) => (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0, config.seed >>> 0);
  const running = producer.run(seed, config.rate);
  process.once('SIGTERM', () => {
    producer.stop();
    void running.then(() => app.close()).then(() => process.exit(0));
  });
  log.append({ ev: 'ready', pid: process.pid });
}
