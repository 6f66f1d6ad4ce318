import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { InvalidArgumentError, Job, SchedulerClient, SchedulerModule, type JobHandler, type JobPage } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';

@Job({ name: 'mail.send' })
class SendMail implements JobHandler<{ n: number }> {
  async handle() {}
}

describe('SchedulerClient listings', () => {
  it('pages with listPage and its next, and list takes the same before', async () => {
    const app = await Test.createTestingModule({ imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), autoStart: false })], providers: [SendMail] })
      .compile()
      .then((moduleRef) => moduleRef.init());
    try {
      const client = app.get(SchedulerClient);
      const ids: string[] = [];
      for (let n = 0; n < 5; n++) ids.push((await client.enqueue('mail.send', { n })).id);
      const first: JobPage = await client.listPage({ limit: 2 });
      expect(first.jobs.map((job) => job.id)).toEqual([ids[4], ids[3]]);
      expect(first.next).toBe(ids[3]);
      expect((await client.list({ limit: 2, before: first.next! })).map((job) => job.id)).toEqual([ids[2], ids[1]]);
      expect(await client.listPage({ limit: 2, before: ids[1] })).toEqual({ jobs: [expect.objectContaining({ id: ids[0] })], next: null });
      await expect(client.listPage({ before: 'not-an-id' })).rejects.toBeInstanceOf(InvalidArgumentError);
    } finally {
      await app.close();
    }
  });
});
