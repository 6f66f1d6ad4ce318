import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row per delivered reminder occurrence. The occurrence id is the primary key, so a reminder
 * that is delivered again (its worker crashed after sending, say) is recognised and discarded.
 */
@Entity('sample_reminder_deliveries')
export class ReminderDelivery {
  @PrimaryColumn('varchar', { length: 36 })
  occurrenceId!: string;

  @Column('varchar', { length: 200 })
  text!: string;

  @Column('varchar', { length: 30 })
  scheduledFor!: string;
}
