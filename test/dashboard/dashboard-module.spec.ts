import 'reflect-metadata';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Injectable, Logger, Module, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { request as httpRequest } from 'node:http';
import { SchedulerDashboardModule, type SchedulerDashboardOptions } from '../../lib/dashboard/index.js';
import { routeOf } from '../../lib/dashboard/nest/dashboard.module.js';
import { InvalidArgumentError, SchedulerModule } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';
import { DashboardBrowser } from './dashboard-browser.js';

/** Lets a request in when it carries `x-admin: yes`, and names the actor from it. */
@Injectable()
class HeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string>; user?: { email: string } }>();
    if (request.headers['x-admin'] !== 'yes') return false;
    request.user = { email: 'ada@example.com' };
    return true;
  }
}

let app: INestApplication | undefined;

async function boot(options: SchedulerDashboardOptions, prefix?: string): Promise<{ store: MemoryJobStore; url: string }> {
  const store = new MemoryJobStore();
  @Module({ imports: [SchedulerModule.forRoot({ store, autoStart: false }), SchedulerDashboardModule.forRoot(options)] })
  class AppModule {}
  app = await NestFactory.create(AppModule, { logger: false });
  if (prefix) app.setGlobalPrefix(prefix);
  await app.listen(0, '127.0.0.1');
  return { store, url: await app.getUrl() };
}

/** A request with a Host header of our choosing, which fetch does not allow: what a rebound name makes a browser send. */
function rawRequest(url: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string; location?: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text, location: res.headers.location }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

afterEach(async () => {
  await app?.close();
  app = undefined;
  jest.restoreAllMocks();
});

describe('SchedulerDashboardModule', () => {
  it('mounts at /scheduler behind the host guard, and audits actions under the actor it names', async () => {
    const { store, url } = await boot({ guards: [HeaderGuard], actor: (req) => (req.user as { email: string }).email });
    const { id } = await store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
    expect((await fetch(`${url}/scheduler`)).status).toBe(403);
    expect((await fetch(`${url}/scheduler/jobs/${id}`)).status).toBe(403);

    const browser = new DashboardBrowser(`${url}/scheduler`);
    const headers = { 'x-admin': 'yes' };
    const overview = await fetch(`${url}/scheduler`, { headers });
    expect(overview.status).toBe(200);
    expect(await overview.text()).toContain('href="/scheduler/jobs"');
    const page = await fetch(`${url}/scheduler/jobs/${id}`, { headers });
    expect(await page.text()).toContain(`href="/scheduler/jobs/${id}/cancel"`);
    const cookie = page.headers.getSetCookie()[0]!.split(';')[0]!;
    expect(cookie).toMatch(/^durable_scheduler_csrf=/);

    const denied = await browser.post(`/jobs/${id}/cancel`, [], { cookie, ['x-admin']: 'no' });
    expect(denied.status).toBe(403);
    expect((await store.jobGet({ jobId: id }))!.state).toBe('scheduled');
    const done = await fetch(`${url}/scheduler/jobs/${id}/cancel`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...headers, cookie, origin: new URL(url).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: `_csrf=${cookie.split('=')[1]}`,
    });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`/scheduler/jobs/${id}?notice=job.cancelled`);
    expect((await store.jobGet({ jobId: id }))!.state).toBe('cancelled');
    expect((await store.auditList())[0]).toMatchObject({ actor: 'ada@example.com', action: 'job.cancel', target: id });
  });

  it('follows a global prefix and a custom path without further options', async () => {
    const { url } = await boot({ guards: [HeaderGuard], path: '/ops/jobs/' }, 'api');
    const page = await fetch(`${url}/api/ops/jobs/dead-letters`, { headers: { 'x-admin': 'yes' } });
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('href="/api/ops/jobs/assets/dashboard.css"');
    expect(text).toContain('<a href="/api/ops/jobs/dead-letters" aria-current="page">');
    const css = await fetch(`${url}/api/ops/jobs/assets/dashboard.css`, { headers: { 'x-admin': 'yes' } });
    expect(css.headers.get('content-type')).toContain('text/css');
  });

  it('refuses to mount without a guard outside development, unless told to, and warns when open', async () => {
    const env = process.env.NODE_ENV;
    try {
      process.env.NODE_ENV = 'production';
      expect(() => SchedulerDashboardModule.forRoot({})).toThrow(InvalidArgumentError);
      expect(() => SchedulerDashboardModule.forRoot({})).toThrow(/has no guard: pass guards/);
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const { url } = await boot({ allowUnguarded: true, readOnly: true });
      expect((await fetch(`${url}/scheduler`)).status).toBe(200);
      expect(warn.mock.calls.map((call) => String(call[0]))).toContain('The scheduler dashboard at /scheduler has no guard: anyone who reaches this app can read its jobs.');
      process.env.NODE_ENV = 'development';
      expect(() => SchedulerDashboardModule.forRoot({})).not.toThrow();
    } finally {
      process.env.NODE_ENV = env;
    }
  });

  it('refuses every action when the actor callback throws or names nobody, and still serves pages', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { store, url } = await boot({ guards: [HeaderGuard], actor: (req) => (req.headers['x-who'] === 'throw' ? (() => { throw new Error('no session'); })() : undefined) });
    const { id } = await store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail' } });
    const page = await fetch(`${url}/scheduler/jobs/${id}`, { headers: { 'x-admin': 'yes', 'x-who': 'throw' } });
    expect(page.status).toBe(200);
    const cookie = page.headers.getSetCookie()[0]!.split(';')[0]!;
    for (const who of ['throw', 'nobody']) {
      const refused = await fetch(`${url}/scheduler/jobs/${id}/cancel`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'x-admin': 'yes', 'x-who': who, cookie, origin: new URL(url).origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: `_csrf=${cookie.split('=')[1]}`,
      });
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('could not tell who is acting');
    }
    expect((await store.jobGet({ jobId: id }))!.state).toBe('scheduled');
    expect(warn.mock.calls.some((call) => String(call[0]).includes("actor callback threw (Error)"))).toBe(true);
  });

  it('takes the mount point from a request only when it is plain segments ending in the mount path', () => {
    expect(routeOf({ originalUrl: '/api/scheduler/jobs/x', params: { rest: ['jobs', 'x'] } } as never, 'scheduler')).toEqual({ base: '/api/scheduler', rest: 'jobs/x' });
    expect(routeOf({ originalUrl: '/scheduler/..\\evil.example\\jobs/x', params: { rest: ['..\\evil.example\\jobs', 'x'] } } as never, 'scheduler').base).toBe('/scheduler');
    expect(routeOf({ originalUrl: '//evil.example/scheduler', params: {} } as never, 'scheduler').base).toBe('/scheduler');
  });

  it('refuses a mount path that is not plain URL segments', () => {
    for (const path of ['', '../admin', 'a b', 'x/./y', 'ja<script>']) {
      expect(() => SchedulerDashboardModule.forRoot({ path, guards: [HeaderGuard] })).toThrow(/The dashboard path must be one or more URL segments/);
    }
  });

  it('issue 35 item 10: the embedded dashboard, unguarded in development, refuses a rebound Host', async () => {
    const env = process.env.NODE_ENV;
    try {
      process.env.NODE_ENV = 'development';
      jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const { store, url } = await boot({});
      const { port } = new URL(url);
      const { id } = await store.jobEnqueue({ job: { name: 'charge', payload: { card: '4242-SECRET' }, queue: 'mail' } });
      // Its own loopback names work on any port, and hand out the CSRF cookie.
      const own = await fetch(`${url}/scheduler/jobs/${id}?reveal=payload`);
      expect(own.status).toBe(200);
      expect(await own.text()).toContain('4242-SECRET');
      const csrf = own.headers.getSetCookie()[0]!.split(';')[0]!;
      expect((await rawRequest(url, '/scheduler', { host: `localhost:${port}` })).status).toBe(200);
      expect((await rawRequest(url, '/scheduler', { host: '[::1]' })).status).toBe(200);

      const evil = { host: `evil.example:${port}`, cookie: csrf };
      const read = await rawRequest(url, `/scheduler/jobs/${id}?reveal=payload`, evil);
      expect(read.status).toBe(421);
      expect(read.text).not.toContain('4242-SECRET');
      expect(read.text).not.toContain('evil.example');
      const act = await rawRequest(url, `/scheduler/jobs/${id}/cancel`, { ...evil, origin: `http://evil.example:${port}`, 'content-type': 'application/x-www-form-urlencoded' }, `_csrf=${csrf.split('=')[1]}`);
      expect(act.status).toBe(421);
      expect((await store.jobGet({ jobId: id }))!.state).toBe('scheduled');
      expect((await rawRequest(url, '/scheduler', { host: 'localhost.evil.example' })).status).toBe(421);
    } finally {
      process.env.NODE_ENV = env;
    }
  });

  it('issue 35 item 10: allowedHosts names more hosts; with guards and no list the Host is left to the guards', async () => {
    const env = process.env.NODE_ENV;
    try {
      process.env.NODE_ENV = 'development';
      jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const { url } = await boot({ allowedHosts: ['ops.internal', 'dev.example:8443'] });
      const { port } = new URL(url);
      expect((await rawRequest(url, '/scheduler', { host: `ops.internal:${port}` })).status).toBe(200);
      expect((await rawRequest(url, '/scheduler', { host: 'dev.example:8443' })).status).toBe(200);
      expect((await rawRequest(url, '/scheduler', { host: 'dev.example:9999' })).status).toBe(421);
      expect((await rawRequest(url, '/scheduler', { host: `127.0.0.1:${port}` })).status).toBe(200);
      await app!.close();
      const guarded = await boot({ guards: [HeaderGuard] });
      expect((await rawRequest(guarded.url, '/scheduler', { host: 'app.example.com', 'x-admin': 'yes' })).status).toBe(200);
      expect(() => SchedulerDashboardModule.forRoot({ guards: [HeaderGuard], allowedHosts: ['https://ops.internal'] })).toThrow(/allowedHosts must be a list of host names/);
    } finally {
      process.env.NODE_ENV = env;
    }
  });

  it('issue 35 item 20: a second dashboard at the same path is refused at start, and one at another path is logged', async () => {
    const store = new MemoryJobStore();
    const options = { guards: [HeaderGuard], actor: () => 'ops' };
    @Module({ imports: [SchedulerModule.forRoot({ store, autoStart: false }), SchedulerDashboardModule.forRoot(options), SchedulerDashboardModule.forRoot({ ...options, readOnly: true })] })
    class Twice {}
    app = await NestFactory.create(Twice, { logger: false });
    await expect(app.init()).rejects.toThrow('SchedulerDashboardModule is mounted twice at /scheduler: the second mount would never answer, and its options would not apply.');
    await app.close().catch(() => undefined);

    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    @Module({ imports: [SchedulerModule.forRoot({ store, autoStart: false }), SchedulerDashboardModule.forRoot(options), SchedulerDashboardModule.forRoot({ ...options, path: 'support', readOnly: true })] })
    class TwoPaths {}
    app = await NestFactory.create(TwoPaths, { logger: false });
    await app.listen(0, '127.0.0.1');
    const url = await app.getUrl();
    expect(log.mock.calls.map((call) => String(call[0]))).toContain('A second scheduler dashboard is mounted at /support, besides /scheduler; each answers with its own options.');
    const headers = { 'x-admin': 'yes' };
    expect(await (await fetch(`${url}/scheduler`, { headers })).text()).not.toContain('read-only');
    expect(await (await fetch(`${url}/support`, { headers })).text()).toContain('read-only');
    // The same module imported twice is one mount.
    await app.close();
    const once = SchedulerDashboardModule.forRoot(options);
    @Module({ imports: [once] })
    class Inner {}
    @Module({ imports: [SchedulerModule.forRoot({ store, autoStart: false }), once, Inner] })
    class Shared {}
    app = await NestFactory.create(Shared, { logger: false });
    await expect(app.init()).resolves.toBe(app);
  });
});
