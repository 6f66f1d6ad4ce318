import { Controller, Post } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { SchedulerClient } from '../../lib/index.js';

@Controller('reports')
export class ReportsController {
  constructor(private readonly scheduler: SchedulerClient) {}

  /** `POST /reports` enqueues a job that fails twice, then succeeds: watch the retries in the log. */
  @Post()
  async build() {
    const reportId = randomUUID().slice(0, 8);
    const { id } = await this.scheduler.enqueue('reports.flaky', { reportId });
    return { reportId, jobId: id };
  }
}
