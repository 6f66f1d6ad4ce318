import { BadRequestException, Controller, Get, NotFoundException, Param } from '@nestjs/common';
import { InvalidArgumentError, SchedulerClient } from '../../lib/index.js';

@Controller('jobs')
export class JobsController {
  constructor(private readonly scheduler: SchedulerClient) {}

  /** `GET /jobs/:id`: state, attempts and last error of one job. */
  @Get(':id')
  async get(@Param('id') id: string) {
    const job = await this.scheduler.get(id).catch((error: unknown) => {
      if (error instanceof InvalidArgumentError) throw new BadRequestException(error.message);
      throw error;
    });
    if (!job) throw new NotFoundException(`No job ${id}.`);
    const { name, state, attempt, maxAttempts, lastError, runAt, finishedAt, output, occurrenceId } = job;
    return { id: job.id, name, state, attempt, maxAttempts, lastError: lastError?.split('\n')[0] ?? null, runAt, finishedAt, output, occurrenceId };
  }
}
