import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkOptions, InvalidArgumentError } from '../../core/index.js';
import { createDashboardHandler, DASHBOARD_HANDLER_KEYS, type DashboardHandlerOptions } from './dashboard-handler.js';
import { requestUrl } from './dashboard-request.js';
import { checkAllowedHosts, cookieValue, hostAllowed, LOOPBACK_HOSTS, refuse, refuseHost, setSecurityHeaders } from './dashboard-security.js';

const TOKEN_COOKIE = 'durable_scheduler_token';
const LOOPBACK_BINDINGS = new Set(['127.0.0.1', '::1', 'localhost']);

/** Options of {@link startDashboardServer}. */
export interface DashboardServerOptions extends DashboardHandlerOptions {
  /** The interface to bind. Default `127.0.0.1`; any other needs `token`. */
  readonly host?: string;
  /** Default 0: any free port. */
  readonly port?: number;
  /**
   * A secret every request must carry: as `Authorization: Bearer <token>`, or once as `?token=` in
   * the address, after which a cookie carries it. Required when `host` is not a loopback address.
   */
  readonly token?: string;
  /** The name the audit log records for actions. Default `dashboard`. */
  readonly actor?: string;
  /**
   * Without a token, host names the server answers to besides its loopback names on its port
   * (`127.0.0.1:<port>`, `localhost:<port>`, `[::1]:<port>`): `name` on any port, or `name:port`.
   */
  readonly allowedHosts?: readonly string[];
}

/** A running standalone dashboard. */
export interface DashboardServer {
  /** `http://host:port`, with the bound port. */
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function cookieToken(req: IncomingMessage): string | null {
  const value = cookieValue(req, TOKEN_COOKIE);
  try {
    return value === null ? null : decodeURIComponent(value);
  } catch {
    return null;
  }
}


/**
 * Serves the dashboard without an app, on its own port (the CLI's `dashboard` command). It binds
 * 127.0.0.1 unless told otherwise, and refuses to bind anywhere else without a token.
 */
export async function startDashboardServer(options: DashboardServerOptions): Promise<DashboardServer> {
  checkOptions(options ?? null, [...DASHBOARD_HANDLER_KEYS, 'host', 'port', 'token', 'actor', 'allowedHosts'], { what: 'dashboard server' });
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK_BINDINGS.has(host) && !options.token) {
    throw new InvalidArgumentError(`The dashboard binds ${host}, which other machines can reach, so it needs a token: pass --token, or bind 127.0.0.1.`, 'token');
  }
  if (options.token !== undefined && options.token.length < 16) throw new InvalidArgumentError('The dashboard token must be at least 16 characters long.', 'token');
  const expected = options.token === undefined ? null : digest(options.token);
  const { store, readOnly, revealPayloadsWhenReadOnly, allowedOrigins, logError } = options;
  const handler = createDashboardHandler({ store, readOnly, revealPayloadsWhenReadOnly, allowedOrigins, ...(logError ? { logError } : {}) });
  const actor = options.actor ?? 'dashboard';
  const extraHosts = checkAllowedHosts(options.allowedHosts) ?? [];

  const authorized = (req: IncomingMessage, url: URL): 'yes' | 'no' | 'from-query' => {
    if (!expected) return 'yes';
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const given = bearer ?? cookieToken(req) ?? url.searchParams.get('token');
    if (given === null || !timingSafeEqual(digest(given), expected)) return 'no';
    return bearer === undefined && cookieToken(req) === null ? 'from-query' : 'yes';
  };

  let port = 0;
  // Without a token the loopback binding is the only protection, and DNS rebinding gets around it;
  // the Host allow-list keeps rebound names out (dashboard-security.ts).
  let allowedHosts: readonly string[] = [];
  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    const url = requestUrl(req);
    if (!expected && !hostAllowed(req.headers.host, allowedHosts)) {
      refuseHost(res, allowedHosts);
      return;
    }
    const access = authorized(req, url);
    if (access === 'no') {
      refuse(res, 401, 'This dashboard needs its token: open it with ?token=<token> once, or send Authorization: Bearer <token>.');
      return;
    }
    if (access === 'from-query') {
      // Keep the token out of the address bar, history and Referer from here on.
      url.searchParams.delete('token');
      setSecurityHeaders(res);
      res.statusCode = 303;
      res.setHeader('Set-Cookie', `${TOKEN_COOKIE}=${encodeURIComponent(options.token!)}; Path=/; HttpOnly; SameSite=Strict`);
      // A path that starts with // would be read as another host: go to the root instead.
      res.setHeader('Location', url.pathname.startsWith('//') ? '/' : `${url.pathname}${url.search}`);
      res.end();
      return;
    }
    void handler(req, res, { base: '', rest: url.pathname, actor });
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    try {
      serve(req, res);
    } catch {
      // The handler turns its own failures into pages; this catches a malformed request before it.
      if (!res.headersSent) refuse(res, 400, 'The dashboard could not read this request.');
      else res.end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  port = address.port;
  allowedHosts = [...LOOPBACK_HOSTS.map((name) => `${name}:${port}`), ...extraHosts];
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
