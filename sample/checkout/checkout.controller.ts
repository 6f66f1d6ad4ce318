import { BadRequestException, Body, Controller, Get, NotFoundException, Param, ParseUUIDPipe, Post, Put } from '@nestjs/common';
import { InvalidArgumentError, SchedulerClient } from '../../lib/index.js';
import { CheckoutService } from './checkout.service.js';

@Controller('checkouts')
export class CheckoutController {
  constructor(
    private readonly checkouts: CheckoutService,
    private readonly scheduler: SchedulerClient,
  ) {}

  /**
   * `POST /checkouts` with `{ customerId, item, paymentMethod? }`: reserve, then charge, then ship.
   * `item: "unobtainium"` fails the reservation and `paymentMethod: "declined"` the charge; either
   * way the later steps are cancelled and the dead letter shows up in the log.
   */
  @Post()
  async place(@Body() body: { customerId?: unknown; item?: unknown; paymentMethod?: unknown }) {
    const customerId = typeof body?.customerId === 'string' && /^[\w-]{1,60}$/.test(body.customerId) ? body.customerId : undefined;
    if (!customerId) throw new BadRequestException('customerId must be 1 to 60 letters, digits, dashes or underscores.');
    const item = typeof body.item === 'string' && body.item.length > 0 ? body.item.slice(0, 200) : 'widget';
    const paymentMethod = body.paymentMethod === 'declined' ? 'declined' : 'card';
    return this.checkouts.place(customerId, item, paymentMethod);
  }

  /**
   * `PUT /checkouts/:id/payment-method` with `{ paymentMethod }`: the customer changes a declined
   * card, after which a replay of the dead-lettered charge (dashboard or CLI) charges the new one.
   */
  @Put(':id/payment-method')
  async changePaymentMethod(@Param('id', ParseUUIDPipe) id: string, @Body() body: { paymentMethod?: unknown }) {
    if (body?.paymentMethod !== 'card' && body?.paymentMethod !== 'declined') throw new BadRequestException('paymentMethod must be "card" or "declined".');
    if (!(await this.checkouts.changePaymentMethod(id, body.paymentMethod))) throw new NotFoundException(`No checkout ${id}.`);
    return { checkoutId: id, paymentMethod: body.paymentMethod };
  }

  /** `GET /checkouts/:id`: the checkout row, as far as its steps have taken it. */
  @Get(':id')
  async get(@Param('id', ParseUUIDPipe) id: string) {
    const checkout = await this.checkouts.find(id);
    if (!checkout) throw new NotFoundException(`No checkout ${id}.`);
    return checkout;
  }

  /** `GET /checkouts/jobs/:jobId/history`: one step's state changes, oldest first. */
  @Get('jobs/:jobId/history')
  async history(@Param('jobId') jobId: string) {
    // No ParseUUIDPipe: it takes RFC 9562 ids only, and a job id may be any 128-bit UUID text.
    const entries = await this.scheduler.history(jobId).catch((error: unknown) => {
      if (error instanceof InvalidArgumentError) throw new BadRequestException(error.message);
      throw error;
    });
    return entries.map(({ state, attempt, at }) => ({ state, attempt, at }));
  }
}
