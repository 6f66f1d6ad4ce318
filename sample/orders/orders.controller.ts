import { Body, Controller, Get, NotFoundException, Param, Post, Query } from '@nestjs/common';
import { OrdersService, RolledBack } from './orders.service.js';

@Controller('orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  /** `POST /orders` with `{ item, quantity }`; `?fail=1` rolls the order and its job back together. */
  @Post()
  async place(@Body() body: { item?: string; quantity?: number; failFirstAttempt?: boolean }, @Query('fail') fail?: string) {
    const item = typeof body?.item === 'string' && body.item.length > 0 ? body.item.slice(0, 200) : 'widget';
    const quantity = Number.isInteger(body?.quantity) ? body.quantity! : 1;
    try {
      const { orderId, jobId } = await this.orders.place(item, quantity, fail === '1', body?.failFirstAttempt === true);
      return { orderId, jobId, committed: true, note: 'The order row and its confirmation job committed together.' };
    } catch (error) {
      if (!(error instanceof RolledBack)) throw error;
      const { orderId, jobId } = error as RolledBack & { orderId: string; jobId: string };
      return { orderId, jobId, committed: false, note: 'The transaction rolled back: neither the order nor its job exists.' };
    }
  }

  @Get(':id')
  async get(@Param('id') id: string) {
    const order = await this.orders.find(id);
    if (!order) throw new NotFoundException(`No order ${id}.`);
    return order;
  }
}
