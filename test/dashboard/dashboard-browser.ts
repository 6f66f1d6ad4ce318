import type { JobStore } from '../../lib/store/index.js';
import { startDashboardServer, type DashboardServer, type DashboardServerOptions } from '../../lib/dashboard/index.js';

/** A response as the tests read it. */
export interface Page {
  readonly status: number;
  readonly text: string;
  readonly headers: Headers;
}

/**
 * A minimal browser for server-level tests: keeps the cookies the dashboard sets, sends the Origin
 * a browser sends with a form POST, and reads the CSRF token from its cookie as a page's form would.
 */
export class DashboardBrowser {
  private readonly cookies = new Map<string, string>();

  constructor(readonly base: string) {}

  private remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      this.cookies.set(name!.trim(), value.join('='));
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  get csrf(): string {
    return this.cookies.get('durable_scheduler_csrf') ?? '';
  }

  async get(path: string): Promise<Page> {
    const response = await fetch(this.base + path, { headers: { cookie: this.cookieHeader() }, redirect: 'manual' });
    this.remember(response);
    return { status: response.status, text: await response.text(), headers: response.headers };
  }

  /** POSTs a form the way a page of this dashboard would; `headers` overrides what a browser sends. */
  async post(path: string, fields: readonly (readonly [string, string])[] = [], headers: Record<string, string> = {}): Promise<Page> {
    if (!this.csrf) await this.get('/');
    const body = new URLSearchParams([['_csrf', this.csrf], ...fields.map(([name, value]): [string, string] => [name, value])]);
    const response = await fetch(this.base + path, {
      method: 'POST',
      body,
      redirect: 'manual',
      headers: { cookie: this.cookieHeader(), origin: new URL(this.base).origin, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
    this.remember(response);
    return { status: response.status, text: await response.text(), headers: response.headers };
  }
}

/** Starts the standalone dashboard on a store, on a free loopback port. */
export async function serveDashboard(store: JobStore, options: Partial<DashboardServerOptions> = {}): Promise<{ server: DashboardServer; browser: DashboardBrowser }> {
  const server = await startDashboardServer({ store, actor: 'tester', ...options });
  return { server, browser: new DashboardBrowser(server.url) };
}
