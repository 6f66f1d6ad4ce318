import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { SchedulerClient } from '../../lib/index.js';
import { Order } from './order.entity.js';

export class RolledBack extends Error {}

@Injectable()
export class OrdersService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly scheduler: SchedulerClient,
  ) {}

  /**
   * Writes the order and enqueues its confirmation in one transaction: both exist, or neither.
   * With `fail`, the transaction rolls back after both writes, to show that the job goes too. With
   * `failFirstAttempt`, the confirmation's first attempt fails, to show a retry in the trace.
   */
  async place(item: string, quantity: number, fail: boolean, failFirstAttempt = false): Promise<{ orderId: string; jobId: string }> {
    const orderId = randomUUID();
    let jobId = '';
    try {
      await this.dataSource.transaction(async (manager) => {
        await manager.insert(Order, { id: orderId, item, quantity });
        ({ id: jobId } = await this.scheduler.enqueue(
          'orders.confirm',
          failFirstAttempt ? { orderId, failFirstAttempt } : { orderId },
          failFirstAttempt ? { manager, retry: { baseDelayMs: 200, jitter: false } } : { manager },
        ));
        if (fail) throw new RolledBack('rolled back on request');
      });
    } catch (error) {
      if (error instanceof RolledBack) throw Object.assign(error, { orderId, jobId });
      throw error;
    }
    return { orderId, jobId };
  }

  find(orderId: string) {
    return this.dataSource.getRepository(Order).findOneBy({ id: orderId });
  }
}
