import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidArgumentError } from '../../core/index.js';
import { DashboardHttpError } from './dashboard-request.js';

const CSRF_COOKIE = 'durable_scheduler_csrf';
/** 32 random bytes in base64url: checked before comparing, so both sides have the same byte length. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Whether the browser reached this page over https, directly or through a proxy that says so. */
export function isHttps(req: IncomingMessage): boolean {
  return (req.socket as { encrypted?: boolean }).encrypted === true || String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim() === 'https';
}

/**
 * Headers on every dashboard response: a Content-Security-Policy that allows only the dashboard's
 * own script and stylesheet (no inline script, no other origin), no framing, no MIME sniffing, and
 * no caching, since pages can hold payloads and errors.
 */
export function setSecurityHeaders(res: ServerResponse): void {
  res.setHeader(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cache-Control', 'no-store');
}

/** A cookie's raw value as the browser sent it, or null when it sent none of that name. */
export function cookieValue(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return null;
}

/**
 * The CSRF token of this browser: a random value in a cookie that only this site's pages can send
 * (SameSite=Strict, HttpOnly, scoped to the mount path), repeated in every form the pages render.
 * A forged form from another site cannot know it. The pair needs no server-side state, so it holds
 * across restarts and across several app instances behind one address.
 */
export function csrfToken(req: IncomingMessage, res: ServerResponse, base: string): string {
  const existing = cookieValue(req, CSRF_COOKIE);
  if (existing && TOKEN_SHAPE.test(existing)) return existing;
  const token = randomBytes(32).toString('base64url');
  res.appendHeader('Set-Cookie', `${CSRF_COOKIE}=${token}; Path=${base || '/'}; HttpOnly; SameSite=Strict${isHttps(req) ? '; Secure' : ''}`);
  return token;
}

/** Refuses a POST whose form token does not match the browser's cookie. */
export function assertCsrf(req: IncomingMessage, form: URLSearchParams): void {
  const cookie = cookieValue(req, CSRF_COOKIE);
  const sent = form.get('_csrf');
  const ok = cookie !== null && sent !== null && TOKEN_SHAPE.test(cookie) && TOKEN_SHAPE.test(sent) && timingSafeEqual(Buffer.from(cookie), Buffer.from(sent));
  if (!ok) throw new DashboardHttpError(403, 'This action was refused: its form token is missing or stale; reload the page and try again.');
}

/**
 * Refuses a POST that did not come from a page of this origin. Browsers send `Origin` with every
 * form POST; `Referer` is the fallback for old ones. `allowedOrigins` names the origins a reverse
 * proxy presents when it rewrites the Host header.
 */
export function assertSameOrigin(req: IncomingMessage, allowedOrigins: readonly string[]): void {
  const claimed = req.headers.origin ?? refererOrigin(req.headers.referer);
  if (!claimed) throw new DashboardHttpError(403, 'This action was refused: the request did not say which page sent it.');
  const host = req.headers.host;
  const own = host ? [`http://${host}`, `https://${host}`] : [];
  if (![...own, ...allowedOrigins].includes(claimed)) {
    throw new DashboardHttpError(403, 'This action was refused: it was sent from a page of another origin.');
  }
}

function refererOrigin(referer: string | undefined): string | undefined {
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}

/** The names of this machine's loopback interface: a dashboard with no other protection answers only to these. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** A Host header or an allow-list entry as `[name, port]`, the name lower-cased and an IPv6 address kept in brackets. */
function splitHost(value: string): [string, string | null] {
  const text = value.trim().toLowerCase();
  const cut = text.startsWith('[') ? text.indexOf(']') + 1 : text.lastIndexOf(':');
  if (cut <= 0 || cut >= text.length) return [text, null];
  return text[cut] === ':' ? [text.slice(0, cut), text.slice(cut + 1)] : [text, null];
}

/**
 * Whether a request's Host header names one of `allowed`: an entry `name` matches that name on any
 * port, and `name:port` on that port only. A page of another site whose name an attacker rebinds to
 * this machine (DNS rebinding) is same-origin with the dashboard and passes the origin check, which
 * trusts the Host; but its requests still carry the attacker's name in the Host header, so an
 * allow-list of this machine's own names is what keeps them out.
 */
export function hostAllowed(hostHeader: string | undefined, allowed: readonly string[]): boolean {
  if (hostHeader === undefined) return false;
  const [name, port] = splitHost(hostHeader);
  return allowed.some((entry) => {
    const [allowedName, allowedPort] = splitHost(entry);
    return allowedName === name && (allowedPort === null || allowedPort === port);
  });
}

/**
 * Checks a list of host names (`ops.example.com`, `localhost:3000`, `[::1]`) for `allowedHosts`,
 * so a typo fails at start instead of refusing every request.
 */
export function checkAllowedHosts(value: unknown, field = 'allowedHosts'): readonly string[] | undefined {
  if (value === undefined) return undefined;
  const valid = (entry: unknown) => typeof entry === 'string' && /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(:\d{1,5})?$/.test(entry);
  if (!Array.isArray(value) || !value.every(valid)) {
    throw new InvalidArgumentError(`${field} must be a list of host names, each optionally with :port, such as ["ops.example.com", "localhost:3000"].`, field);
  }
  return value as readonly string[];
}

/** Answers a refused request with one plain-text sentence, under the dashboard's headers. */
export function refuse(res: ServerResponse, status: number, text: string): void {
  setSecurityHeaders(res);
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(`${text}\n`);
}

/** Refuses a request addressed to a host name not on the allow-list (421 Misdirected Request), naming the allowed ones, never the one sent. */
export function refuseHost(res: ServerResponse, allowed: readonly string[]): void {
  refuse(res, 421, `This dashboard answers only to ${allowed.join(', ')}; open it at one of those, or name this host in allowedHosts.`);
}
