import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkOptions, IllegalTransitionError, InvalidArgumentError, JobNotFoundError, SchedulerError, ScheduleNotFoundError, visibleText } from '../../core/index.js';
import { html, type SafeHtml } from '../html/html.js';
import { layout, type PageContext } from '../html/layout.js';
import type { LocalHandlers } from '../pages/node-handlers.view.js';
import { performAction } from './dashboard-actions.js';
import { isBulkQuestion } from './bulk-actions.js';
import { renderPage } from './dashboard-pages.js';
import { DashboardHttpError, readForm, requestUrl, splitSegments, type DashboardRequest } from './dashboard-request.js';
import { assertCsrf, assertSameOrigin, csrfToken, setSecurityHeaders } from './dashboard-security.js';
import type { DashboardStore } from './dashboard-store.js';
import { NOTICES } from './notices.js';

/** How the dashboard behaves, whoever serves it. */
export interface DashboardHandlerOptions {
  readonly store: DashboardStore;
  /** Refuse every action on the server, and draw no action controls. Default false. */
  readonly readOnly?: boolean;
  /** In read-only mode, still let an operator reveal a job's payload. Default false. */
  readonly revealPayloadsWhenReadOnly?: boolean;
  /** Origins besides the request's own Host that may send actions (a proxy that rewrites Host). */
  readonly allowedOrigins?: readonly string[];
  /** Where a failed request is reported (one line, no payload). Default `console.error`. */
  readonly logError?: (line: string) => void;
}

/** The keys {@link DashboardHandlerOptions} has: a misspelt `readOnly` would otherwise leave actions on. */
export const DASHBOARD_HANDLER_KEYS: readonly string[] = ['store', 'readOnly', 'revealPayloadsWhenReadOnly', 'allowedOrigins', 'logError'];

/** Where a request lands: the mount point as the browser sees it, the path below it, and who asks. */
export interface DashboardRoute {
  readonly base: string;
  readonly rest: string;
  /** The name the audit log records; empty when it could not be told, and then every action is refused. */
  readonly actor: string;
}

/** Serves one request; never throws (errors become pages). */
export type DashboardHandler = (req: IncomingMessage & { body?: unknown }, res: ServerResponse, route: DashboardRoute) => Promise<void>;

const ASSETS: Readonly<Record<string, string>> = {
  'dashboard.css': 'text/css; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};
const assetCache = new Map<string, Buffer>();

/**
 * The content type of a dashboard asset, or null when no asset has that name. An own-property
 * lookup: `constructor` or `__proto__` are names a request can send, and must not find
 * Object.prototype's members and go on to read a file that does not exist.
 */
function assetType(name: string | undefined): string | null {
  return name !== undefined && Object.hasOwn(ASSETS, name) ? ASSETS[name]! : null;
}

async function asset(name: string): Promise<Buffer> {
  let body = assetCache.get(name);
  if (!body) {
    try {
      body = await readFile(new URL(`../assets/${name}`, import.meta.url));
    } catch {
      // The file system's message names the install path, which the log must not carry.
      throw new Error(`the dashboard's asset ${name} could not be read; reinstall the package`);
    }
    assetCache.set(name, body);
  }
  return body;
}

function statusOf(error: unknown): number {
  if (error instanceof DashboardHttpError) return error.status;
  if (error instanceof JobNotFoundError || error instanceof ScheduleNotFoundError) return 404;
  if (error instanceof InvalidArgumentError) return 400;
  if (error instanceof IllegalTransitionError) return 409;
  return 500;
}

function send(res: ServerResponse, status: number, body: SafeHtml): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.end(body.text);
}

/**
 * The dashboard as a plain Node request handler, so the Nest module and the standalone server
 * serve the same pages. Reads are GETs; every action is a POST that must carry the browser's
 * CSRF token and come from this origin, and is refused outright in read-only mode.
 */
export function createDashboardHandler(options: DashboardHandlerOptions): DashboardHandler {
  return buildDashboardHandler(options, undefined);
}

/**
 * {@link createDashboardHandler} mounted in an app: the Workers page also lists the app's own
 * handlers (read by `handlers` when the page is drawn), which the store does not record. For the Nest module; not a public
 * option, so a dashboard served from the store alone cannot show a list that describes another process.
 */
export function createMountedDashboardHandler(options: DashboardHandlerOptions, handlers: () => LocalHandlers): DashboardHandler {
  return buildDashboardHandler(options, handlers);
}

function buildDashboardHandler(options: DashboardHandlerOptions, handlers: (() => LocalHandlers) | undefined): DashboardHandler {
  checkOptions(options ?? null, DASHBOARD_HANDLER_KEYS, { what: 'dashboard handler' });
  const readOnly = options.readOnly ?? false;
  const payloadRevealable = !readOnly || (options.revealPayloadsWhenReadOnly ?? false);
  const allowedOrigins = options.allowedOrigins ?? [];
  return async (req, res, route) => {
    setSecurityHeaders(res);
    const ctxBase = { base: route.base, now: new Date(), readOnly, csrf: '' };
    try {
      const segments = splitSegments(route.rest);
      const assetContentType = segments[0] === 'assets' && segments.length === 2 && req.method === 'GET' ? assetType(segments[1]) : null;
      if (assetContentType !== null) {
        res.setHeader('Content-Type', assetContentType);
        res.setHeader('Cache-Control', 'public, max-age=300');
        res.end(await asset(segments[1]!));
        return;
      }
      const url = requestUrl(req);
      if (req.method === 'POST') {
        if (readOnly) throw new DashboardHttpError(403, 'This dashboard is read-only: it performs no actions.');
        if (!route.actor) throw new DashboardHttpError(403, 'This action was refused: the dashboard could not tell who is acting, so it could not be audited.');
        assertSameOrigin(req, allowedOrigins);
        const form = await readForm(req);
        assertCsrf(req, form);
        const request: DashboardRequest = { method: 'POST', segments, query: url.searchParams, form, base: route.base, actor: route.actor };
        if (isBulkQuestion(request)) {
          const ctx: PageContext = { ...ctxBase, csrf: csrfToken(req, res, route.base) };
          const page = await renderPage({ store: options.store, ctx, payloadRevealable, handlers }, { ...request, method: 'GET', query: form });
          send(res, 200, page!);
          return;
        }
        const result = await performAction(options.store, request);
        if (!result) throw new DashboardHttpError(404, 'No action lives at this address.');
        res.statusCode = 303;
        res.setHeader('Location', result.location);
        res.end();
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('Allow', 'GET, HEAD, POST');
        throw new DashboardHttpError(405, 'The dashboard answers GET and POST only.');
      }
      const notice = url.searchParams.get('notice');
      const ctx: PageContext = { ...ctxBase, csrf: csrfToken(req, res, route.base), notice: notice && Object.hasOwn(NOTICES, notice) ? NOTICES[notice]! : null };
      const request: DashboardRequest = { method: 'GET', segments, query: url.searchParams, form: new URLSearchParams(), base: route.base, actor: route.actor };
      const page = await renderPage({ store: options.store, ctx, payloadRevealable, refresh: req.headers['x-dashboard-refresh'] === '1', handlers }, request);
      if (!page) throw new DashboardHttpError(404, 'No dashboard page lives at this address.');
      send(res, 200, page);
    } catch (error) {
      const status = statusOf(error);
      // A store failure's text can name hosts or statements; the page says only that it failed.
      const message = status === 500 ? (error instanceof SchedulerError ? error.message : 'The dashboard failed to read or act on the store; the server log has the details.') : (error as Error).message;
      if (status === 500) {
        const detail = error instanceof Error ? `${error.name}: ${visibleText(error.message, { maxLength: 300 })}` : 'a non-error value was thrown';
        (options.logError ?? console.error)(`durable-scheduler dashboard: a request failed: ${detail}`);
      }
      if (res.headersSent) {
        res.end();
        return;
      }
      send(res, status, layout({ ...ctxBase, notice: null }, '', status === 404 ? 'Not found' : status === 403 ? 'Refused' : 'Cannot do that', html`<p class="problem">${message}</p><p><a href="${route.base || '/'}">Back to the overview</a></p>`));
    }
  };
}
