import type { PageContext } from '../html/layout.js';
import type { LocalHandlers } from '../pages/node-handlers.view.js';
import { DashboardHttpError } from './dashboard-request.js';
import type { DashboardStore } from './dashboard-store.js';

/** What the page reader needs besides the request. */
export interface PageDeps {
  readonly store: DashboardStore;
  readonly ctx: PageContext;
  /** Whether this dashboard may reveal payloads (false in read-only mode unless allowed). */
  readonly payloadRevealable: boolean;
  /** The page's own live refresh asks (dashboard.js): it swaps in only the live parts. */
  readonly refresh?: boolean;
  /**
   * Reads the handlers of the app the dashboard is mounted in, when a page shows them (after the
   * app has booted); absent when the dashboard is served from the store alone.
   */
  readonly handlers?: () => LocalHandlers;
}

/** A query parameter, trimmed, or undefined when absent or empty. */
export function optional(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name)?.trim();
  return value ? value : undefined;
}

/** Refuses an action's question in read-only mode, as the action itself is refused. */
export function refuseInReadOnly(ctx: PageContext): void {
  if (ctx.readOnly) throw new DashboardHttpError(403, 'This dashboard is read-only: it performs no actions.');
}
