import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SchedulerClient, type JobSpec } from '../../lib/index.js';
import { SeededRandom } from '../../lib/worker/public-api.js';
import { ChaosTables } from './chaos-tables.js';
import { ExecutionLog } from './execution-log.js';
import type { ChaosPayload } from './workload.js';

/** One job of a batch, and what the checks expect of it. */
interface Planned {
  readonly spec: JobSpec;
  readonly kind: string;
  /** The terminal state the job must reach. */
  readonly expected: 'succeeded' | 'dead_lettered' | 'cancelled';
  readonly parents: readonly string[];
  readonly mode: 'on_success' | 'on_any_terminal' | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Enqueues the mixed workload in its own TypeORM transactions: each batch's jobs and the rows that
 * record them (`chaos.enqueued`) commit together or not at all, and one transaction in ten rolls
 * back on purpose. "Lost" is then a committed row whose job did not finish; a job without a row is
 * a phantom.
 */
@Injectable()
export class ChaosProducer {
  private stopping = false;
  /** Recently committed jobs that will succeed: parents for later dependants. */
  private readonly recent: string[] = [];

  constructor(
    private readonly dataSource: DataSource,
    private readonly scheduler: SchedulerClient,
    @Inject(ExecutionLog) private readonly log: ExecutionLog,
    @Inject(ChaosTables) private readonly tables: ChaosTables,
  ) {}

  stop(): void {
    this.stopping = true;
  }

  async run(seed: number, rate: number): Promise<void> {
    const random = new SeededRandom(seed);
    while (!this.stopping) {
      const batch = this.plan(random);
      const rollBack = random.next() < 0.1;
      try {
        await this.dataSource.transaction(async (manager) => {
          await this.scheduler.enqueueMany(batch.map((p) => p.spec), { manager });
          await this.tables.recordEnqueued(
            manager,
            batch.map((p) => ({ id: p.spec.id!, name: p.spec.name, kind: p.kind, expected: p.expected, producer: this.log.workerId, parents: p.parents, mode: p.mode })),
          );
          if (rollBack) throw new RolledBackOnPurpose();
        });
        this.log.append({ ev: 'committed', ids: batch.map((p) => p.spec.id) });
        // Parents for later dependants: jobs that must succeed (a last-chance job may be dead-lettered by a fault).
        for (const p of batch) if (p.expected === 'succeeded' && p.parents.length === 0 && p.kind !== 'last-chance') this.recent.push(p.spec.id!);
        this.recent.splice(0, Math.max(0, this.recent.length - 20));
      } catch (error) {
        if (error instanceof RolledBackOnPurpose) this.log.append({ ev: 'rolled_back', ids: batch.map((p) => p.spec.id) });
        else this.log.append({ ev: 'enqueue_failed', error: String((error as Error)?.message ?? error) });
      }
      await sleep((1_000 / rate) * (0.5 + random.next()));
    }
  }

  /** One transaction's worth of jobs, drawn from the seeded mix. */
  private plan(random: SeededRandom): Planned[] {
    const ms = () => 60 + Math.floor(random.next() * 540);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random.next() * items.length)]!;
    const job = (name: JobSpec['name'], payload: ChaosPayload, kind: string, expected: Planned['expected'], parents: string[] = [], mode: Planned['mode'] = null, maxAttempts?: number): Planned => {
      const spec = {
        name,
        payload,
        id: randomUUID(),
        ...(parents.length ? { dependsOn: parents, dependencyMode: mode ?? 'on_success' } : {}),
        ...(maxAttempts ? { maxAttempts } : {}),
      } as JobSpec;
      return { spec, kind, expected, parents, mode: parents.length ? (mode ?? 'on_success') : null };
    };
    const times = (n: number, make: () => Planned) => Array.from({ length: n }, make);
    const roll = random.next();
    if (roll < 0.3) return times(1 + Math.floor(random.next() * 3), () => job('chaos.plain', { ms: ms() }, 'plain', 'succeeded'));
    if (roll < 0.45) return times(1 + Math.floor(random.next() * 2), () => job('chaos.failing', { ms: ms(), failures: 1 + Math.floor(random.next() * 3) }, 'failing', 'succeeded'));
    if (roll < 0.52) return [job('chaos.poison', { ms: 30 + Math.floor(random.next() * 120) }, 'poison', 'dead_lettered')];
    // Fails once, then succeeds on its last attempt: a lease lost on that attempt cannot be
    // reclaimed, so the sweep dead-letters it ('lease expired') unless a late report gets in first.
    if (roll < 0.58) return [job('chaos.failing', { ms: ms(), failures: 1 }, 'last-chance', 'succeeded', [], null, 2)];
    if (roll < 0.78) {
      return times(1 + Math.floor(random.next() * 4), () => job('chaos.limited', { ms: ms(), tenant: pick(['t0', 't1', 't2']) }, 'limited', 'succeeded'));
    }
    if (roll < 0.88) {
      const a = job('chaos.step', { ms: ms() }, 'graph', 'succeeded');
      const b = job('chaos.step', { ms: ms() }, 'graph', 'succeeded', [a.spec.id!]);
      const c = job('chaos.step', { ms: ms() }, 'graph', 'succeeded', [a.spec.id!]);
      const d = job('chaos.step', { ms: ms() }, 'graph', 'succeeded', [b.spec.id!, c.spec.id!]);
      return [a, b, c, d];
    }
    if (roll < 0.93) {
      const p = job('chaos.poison', { ms: 30 + Math.floor(random.next() * 120) }, 'poison', 'dead_lettered');
      return [
        p,
        job('chaos.step', { ms: ms() }, 'after-poison', 'cancelled', [p.spec.id!], 'on_success'),
        job('chaos.step', { ms: ms() }, 'after-poison', 'succeeded', [p.spec.id!], 'on_any_terminal'),
      ];
    }
    if (this.recent.length === 0) return [job('chaos.plain', { ms: ms() }, 'plain', 'succeeded')];
    const parents = [...new Set([pick(this.recent), pick(this.recent)])];
    return [job('chaos.step', { ms: ms() }, 'late-child', 'succeeded', parents)];
  }
}

class RolledBackOnPurpose extends Error {}
