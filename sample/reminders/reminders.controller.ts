import { BadRequestException, Body, Controller, Post } from '@nestjs/common';
import { InvalidArgumentError, SchedulerClient } from '../../lib/index.js';

@Controller('reminders')
export class RemindersController {
  constructor(private readonly scheduler: SchedulerClient) {}

  /** `POST /reminders` with `{ text, delayMs }`: a one-shot reminder. */
  @Post()
  async remind(@Body() body: { text?: string; delayMs?: number }) {
    const text = typeof body?.text === 'string' && body.text.length > 0 ? body.text.slice(0, 200) : 'Time for a break.';
    try {
      const { id } = await this.scheduler.enqueue('reminders.send', { text }, { delayMs: body?.delayMs ?? 5_000 });
      return { jobId: id, text };
    } catch (error) {
      if (error instanceof InvalidArgumentError) throw new BadRequestException(error.message);
      throw error;
    }
  }
}
