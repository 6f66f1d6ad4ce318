import { afterEach, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { startDashboardServer, type DashboardServer } from '../../lib/dashboard/index.js';
import { InvalidArgumentError } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';

const TOKEN = 'a-long-enough-secret-token';
let server: DashboardServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the standalone dashboard server', () => {
  it('binds 127.0.0.1 by default and serves without a token there', async () => {
    server = await startDashboardServer({ store: new MemoryJobStore() });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(server.url)).status).toBe(200);
  });

  it('without a token answers only to loopback names, so a rebound DNS name cannot reach it', async () => {
    server = await startDashboardServer({ store: new MemoryJobStore() });
    const { port } = new URL(server.url);
    const get = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/jobs', headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await get(`evil.example:${port}`)).toBe(421);
    expect(await get('127.0.0.1')).toBe(421);
    expect(await get(`localhost:${port}`)).toBe(200);
    expect(await get(`127.0.0.1:${port}`)).toBe(200);
  });

  it('issue 35 item 10: the standalone Host allow-list takes allowedHosts too, and refuses a malformed entry', async () => {
    server = await startDashboardServer({ store: new MemoryJobStore(), allowedHosts: ['devbox.lan'] });
    const { port } = new URL(server.url);
    const get = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/', headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await get(`devbox.lan:${port}`)).toBe(200);
    expect(await get(`DEVBOX.lan:${port}`)).toBe(200);
    expect(await get(`localhost:${port}`)).toBe(200);
    expect(await get(`evil.example:${port}`)).toBe(421);
    await expect(startDashboardServer({ store: new MemoryJobStore(), allowedHosts: ['http://devbox.lan/'] })).rejects.toThrow(/allowedHosts must be a list of host names/);
  });

  it('survives malformed requests: a path of //, a bad percent-escape in the token cookie', async () => {
    server = await startDashboardServer({ store: new MemoryJobStore(), token: TOKEN });
    const { port } = new URL(server.url);
    let location: string | undefined;
    const raw = (path: string, headers: Record<string, string> = {}) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
          res.resume();
          location = res.headers.location;
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await raw('//')).toBe(401);
    expect(await raw('//', { authorization: `Bearer ${TOKEN}` })).toBe(200);
    expect(await raw('/', { cookie: 'durable_scheduler_token=%' })).toBe(401);
    expect(await raw(`//evil.example/?token=${TOKEN}`)).toBe(303);
    expect(location).toBe('/');
    expect(await raw('/', { authorization: `Bearer ${TOKEN}` })).toBe(200);
  });

  it('refuses to bind a reachable interface without a token, or with a short one, before listening', async () => {
    await expect(startDashboardServer({ store: new MemoryJobStore(), host: '0.0.0.0' })).rejects.toThrow(InvalidArgumentError);
    await expect(startDashboardServer({ store: new MemoryJobStore(), host: '0.0.0.0' })).rejects.toThrow(/needs a token: pass --token, or bind 127\.0\.0\.1/);
    await expect(startDashboardServer({ store: new MemoryJobStore(), token: 'short' })).rejects.toThrow(/at least 16 characters/);
  });

  it('with a token, answers 401 without it, takes it once from the address into a cookie, or as a bearer', async () => {
    server = await startDashboardServer({ store: new MemoryJobStore(), host: '0.0.0.0', token: TOKEN });
    const url = server.url.replace('0.0.0.0', '127.0.0.1');
    expect((await fetch(`${url}/jobs`)).status).toBe(401);
    expect((await fetch(`${url}/jobs?token=wrong-but-long-enough-token`)).status).toBe(401);
    expect((await fetch(`${url}/jobs`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    const entry = await fetch(`${url}/jobs?state=running&token=${TOKEN}`, { redirect: 'manual' });
    expect(entry.status).toBe(303);
    expect(entry.headers.get('location')).toBe('/jobs?state=running');
    const cookie = entry.headers.getSetCookie()[0]!;
    expect(cookie).toMatch(/^durable_scheduler_token=.+; Path=\/; HttpOnly; SameSite=Strict$/);
    expect((await fetch(`${url}/jobs`, { headers: { cookie: cookie.split(';')[0]! } })).status).toBe(200);
  });

  it('issue 35 item 11: asset and page names that are Object.prototype members answer 404 and log nothing', async () => {
    const logged: string[] = [];
    server = await startDashboardServer({ store: new MemoryJobStore(), logError: (line) => logged.push(line) });
    const members = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];
    for (const name of members) {
      for (const path of [`/assets/${name}`, `/${name}`, `/dead-letters/${name}`, `/queues/${name}/${name}`]) {
        const response = await fetch(`${server.url}${path}`);
        expect({ path, status: response.status }).toEqual({ path, status: 404 });
        expect(await response.text()).not.toContain(process.cwd());
      }
      expect((await fetch(`${server.url}/jobs?state=${name}`)).status).toBe(400);
      expect((await fetch(`${server.url}/?notice=${name}`)).status).toBe(200);
    }
    expect(logged).toEqual([]);
    // The real assets are still served.
    expect((await fetch(`${server.url}/assets/dashboard.css`)).headers.get('content-type')).toContain('text/css');
  });

  it('issue 35 item 22: serves its icon, linked from every page, under the same policy', async () => {
    server = await startDashboardServer({ store: new MemoryJobStore() });
    const page = await (await fetch(`${server.url}/jobs`)).text();
    expect(page).toContain('<link rel="icon" type="image/svg+xml" href="/assets/favicon.svg">');
    const icon = await fetch(`${server.url}/assets/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(icon.headers.get('content-security-policy')).toContain("img-src 'self'");
    expect(await icon.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>[\s\S]*<\/svg>\s*$/);
  });
});
