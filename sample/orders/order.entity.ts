import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('sample_orders')
export class Order {
  @PrimaryColumn('varchar', { length: 36 })
  id!: string;

  @Column('varchar', { length: 200 })
  item!: string;

  @Column('int')
  quantity!: number;

  /** `pending` until the confirmation job runs, then `confirmed`. */
  @Column('varchar', { length: 20, default: 'pending' })
  status!: string;

  @CreateDateColumn()
  createdAt!: Date;
}
