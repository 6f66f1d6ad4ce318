import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Module, type CanActivate, type INestApplication, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SchedulerDashboardModule } from '../../lib/dashboard/index.js';
import { SchedulerModule } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';

/** The guide's `// admin.guard.ts` block, exactly as printed. */
function guideGuard(): string {
  const guide = readFileSync(join(process.cwd(), 'docs', 'dashboard.md'), 'utf8');
  const block = /```ts\n\/\/ admin\.guard\.ts\n([\s\S]*?)```/.exec(guide);
  expect(block).not.toBeNull();
  return block![1]!;
}

/**
 * The dashboard guide's guard is run as printed, in an app with the guide's mounting options: the
 * snippet test only compiles it, and a guard that compiles can still let nobody in (the guide's
 * earlier one read a `request.user` that nothing set).
 */
describe('the dashboard guide’s AdminGuard', () => {
  const dir = mkdtempSync(join(process.cwd(), 'test', 'docs', '.guard-'));
  const env = { user: process.env.DASHBOARD_USER, password: process.env.DASHBOARD_PASSWORD };
  let app: INestApplication;
  let url: string;
  let store: MemoryJobStore;

  beforeAll(async () => {
    writeFileSync(join(dir, 'admin.guard.ts'), guideGuard());
    const { AdminGuard } = (await import(join(dir, 'admin.guard.ts'))) as { AdminGuard: Type<CanActivate> };
    process.env.DASHBOARD_USER = 'ada';
    process.env.DASHBOARD_PASSWORD = 'correct horse: battery staple';
    store = new MemoryJobStore();
    @Module({ imports: [SchedulerModule.forRoot({ store, autoStart: false }), SchedulerDashboardModule.forRoot({ guards: [AdminGuard], actor: (req) => req.user?.name })] })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });

  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
    process.env.DASHBOARD_USER = env.user;
    process.env.DASHBOARD_PASSWORD = env.password;
    if (env.user === undefined) delete process.env.DASHBOARD_USER;
    if (env.password === undefined) delete process.env.DASHBOARD_PASSWORD;
  });

  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  it('issue 35 item 20: asks a browser for the operator’s name and password, and refuses wrong ones', async () => {
    const none = await fetch(`${url}/scheduler`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Basic realm="scheduler", charset="UTF-8"');
    expect((await fetch(`${url}/scheduler`, { headers: { authorization: basic('ada', 'wrong') } })).status).toBe(401);
    expect((await fetch(`${url}/scheduler`, { headers: { authorization: basic('eve', 'correct horse: battery staple') } })).status).toBe(401);
    expect((await fetch(`${url}/scheduler`, { headers: { authorization: 'Bearer correct horse: battery staple' } })).status).toBe(401);
  });

  it('issue 35 item 20: lets the operator in, and the audit log names them through request.user', async () => {
    const authorization = basic('ada', 'correct horse: battery staple');
    const { id } = await store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
    const page = await fetch(`${url}/scheduler/jobs/${id}`, { headers: { authorization } });
    expect(page.status).toBe(200);
    const cookie = page.headers.getSetCookie()[0]!.split(';')[0]!;
    const done = await fetch(`${url}/scheduler/jobs/${id}/cancel`, {
      method: 'POST',
      redirect: 'manual',
      headers: { authorization, cookie, origin: new URL(url).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: `_csrf=${cookie.split('=')[1]}`,
    });
    expect(done.status).toBe(303);
    expect((await store.auditList())[0]).toMatchObject({ actor: 'ada', action: 'job.cancel', target: id });
  });
});
