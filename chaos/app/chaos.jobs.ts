import { Inject } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { InjectJobEntityManager, Job, type JobContext, type JobHandler } from '../../lib/index.js';
import { ChaosTables } from './chaos-tables.js';
import { ExecutionLog } from './execution-log.js';
import { DEFAULT_MAX_ATTEMPTS, POISON_MAX_ATTEMPTS, TENANT_LIMIT, tenantKey, type ChaosPayload } from './workload.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Shared body: log the start, work, write the execution row through the attempt's EntityManager
 * (so it commits only with the fenced success write), work on with the transaction open, log the
 * end, then succeed or throw. It ignores ctx.signal on purpose: a handler frozen past its lease
 * must try to report late, so the fence is what stops it.
 */
abstract class ChaosJob implements JobHandler<ChaosPayload> {
  constructor(
    @InjectJobEntityManager() private readonly em: EntityManager,
    @Inject(ExecutionLog) private readonly log: ExecutionLog,
    @Inject(ChaosTables) private readonly tables: ChaosTables,
  ) {}

  protected abstract fails(payload: ChaosPayload, ctx: JobContext<ChaosPayload>): boolean;

  protected key(_payload: ChaosPayload): string | null {
    return null;
  }

  async handle(payload: ChaosPayload, ctx: JobContext<ChaosPayload>): Promise<void> {
    const ids = { job: ctx.jobId, attempt: ctx.attempt };
    this.log.append({ ev: 'start', ...ids, name: ctx.name, key: this.key(payload) });
    await sleep(payload.ms / 3);
    await this.tables.recordEffect(this.em, ctx.jobId, ctx.attempt, this.log.workerId);
    await sleep((2 * payload.ms) / 3);
    const fail = this.fails(payload, ctx);
    this.log.append({ ev: 'end', ...ids, threw: fail });
    if (fail) throw new Error(`chaos: ${ctx.name} fails attempt ${ctx.attempt}`);
  }
}

@Job({ name: 'chaos.plain', maxAttempts: DEFAULT_MAX_ATTEMPTS })
export class PlainJob extends ChaosJob {
  protected fails() {
    return false;
  }
}

@Job({ name: 'chaos.step', maxAttempts: DEFAULT_MAX_ATTEMPTS })
export class StepJob extends ChaosJob {
  protected fails() {
    return false;
  }
}

@Job({ name: 'chaos.failing', maxAttempts: DEFAULT_MAX_ATTEMPTS })
export class FailingJob extends ChaosJob {
  protected fails(payload: ChaosPayload, ctx: JobContext<ChaosPayload>) {
    return ctx.attempt <= (payload.failures ?? 0);
  }
}

@Job({ name: 'chaos.poison', maxAttempts: POISON_MAX_ATTEMPTS })
export class PoisonJob extends ChaosJob {
  protected fails() {
    return true;
  }
}

@Job({ name: 'chaos.limited', maxAttempts: DEFAULT_MAX_ATTEMPTS, concurrencyKey: tenantKey, concurrencyLimit: TENANT_LIMIT })
export class LimitedJob extends ChaosJob {
  protected fails() {
    return false;
  }

  protected override key(payload: ChaosPayload) {
    return tenantKey(payload);
  }
}

export const CHAOS_JOBS = [PlainJob, StepJob, FailingJob, PoisonJob, LimitedJob];
