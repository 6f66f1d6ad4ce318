import type { EntityManager } from 'typeorm';
import type { ChaosConfig } from './chaos-config.js';

/** One `enqueued` row: a job a producer's transaction enqueued, and what the checks expect of it. */
export interface EnqueuedRow {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly expected: string;
  readonly producer: string;
  readonly parents: readonly string[];
  readonly mode: string | null;
}

/**
 * The app's two writes to the chaos tables (chaos/checks.ts creates them), in the run's SQL: the
 * handlers' `effects` row, through the attempt's EntityManager, and the producers' `enqueued`
 * rows, in the enqueue's own transaction.
 */
export class ChaosTables {
  constructor(private readonly config: Pick<ChaosConfig, 'store' | 'schema'>) {}

  async recordEffect(em: EntityManager, jobId: string, attempt: number, workerId: string): Promise<void> {
    if (this.config.store === 'mariadb') {
      await em.query(`INSERT INTO \`${this.config.schema}\`.effects (job_id, attempt, worker_id) VALUES (?, ?, ?)`, [jobId, attempt, workerId]);
    } else {
      await em.query(`INSERT INTO "${this.config.schema}".effects (job_id, attempt, worker_id) VALUES ($1, $2, $3)`, [jobId, attempt, workerId]);
    }
  }

  async recordEnqueued(manager: EntityManager, rows: readonly EnqueuedRow[]): Promise<void> {
    if (this.config.store === 'mariadb') {
      // Parents as a JSON array, which the checks read through JSON_TABLE.
      await manager.query(
        `INSERT INTO \`${this.config.schema}\`.enqueued (job_id, name, kind, expected, producer, parents, mode) VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
        rows.flatMap((r) => [r.id, r.name, r.kind, r.expected, r.producer, JSON.stringify(r.parents), r.mode]),
      );
      return;
    }
    await manager.query(
      `INSERT INTO "${this.config.schema}".enqueued (job_id, name, kind, expected, producer, parents, mode)
       SELECT id, name, kind, expected, producer, parents::uuid[], mode FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS r(id, name, kind, expected, producer, parents, mode)`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.name),
        rows.map((r) => r.kind),
        rows.map((r) => r.expected),
        rows.map((r) => r.producer),
        rows.map((r) => `{${r.parents.join(',')}}`),
        rows.map((r) => r.mode),
      ],
    );
  }
}
