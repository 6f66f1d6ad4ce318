import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row per confirmed occurrence. The primary key is the job's occurrence id, so a second run of
 * the same job (after a crash, say) cannot confirm twice: its insert is ignored.
 */
@Entity('sample_order_confirmations')
export class OrderConfirmation {
  @PrimaryColumn('varchar', { length: 36 })
  occurrenceId!: string;

  @Column('varchar', { length: 36 })
  orderId!: string;

  @Column('int')
  attempt!: number;
}
