import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { PaymentMethod } from './checkout-step.js';

/** A checkout, advanced by its three jobs: placed → reserved → charged → shipped. */
@Entity('sample_checkouts')
export class Checkout {
  @PrimaryColumn('varchar', { length: 36 })
  id!: string;

  @Column('varchar', { length: 100 })
  customerId!: string;

  @Column('varchar', { length: 200 })
  item!: string;

  @Column('varchar', { length: 20, default: 'placed' })
  status!: string;

  /** What the charge step charges; see {@link PaymentMethod}. */
  @Column('varchar', { length: 20, default: 'card' })
  paymentMethod!: PaymentMethod;

  @Column('varchar', { length: 60, nullable: true })
  reservationId!: string | null;

  @Column('varchar', { length: 60, nullable: true })
  chargeId!: string | null;

  @Column('varchar', { length: 60, nullable: true })
  trackingNumber!: string | null;

  @CreateDateColumn()
  createdAt!: Date;
}
