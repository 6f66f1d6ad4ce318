import type { CanActivate, ModuleMetadata, Type } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { checkOptions, InvalidArgumentError } from '../../core/index.js';

/** Options of {@link SchedulerDashboardModule.forRoot}. */
export interface SchedulerDashboardOptions {
  /** Where the dashboard mounts in the host app, below any global prefix. Default `scheduler`. */
  readonly path?: string;
  /**
   * Nest guards that every dashboard request passes first, e.g. the app's admin guard. Classes are
   * instantiated in the dashboard module: list the modules their dependencies come from in `imports`.
   */
  readonly guards?: readonly (Type<CanActivate> | CanActivate)[];
  /** Modules the guards' dependencies come from. */
  readonly imports?: ModuleMetadata['imports'];
  /**
   * The name the audit log records for an action, from the request your guard let through (for
   * example `req.user.email`). Default `dashboard`.
   */
  // `user` is whatever your authentication put there (Passport's `req.user`), so it is left untyped.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly actor?: (request: IncomingMessage & { user?: any }) => string | undefined;
  /** Refuse every action on the server and draw no action controls. Default false. */
  readonly readOnly?: boolean;
  /** In read-only mode, still let an operator reveal a job's payload. Default false. */
  readonly revealPayloadsWhenReadOnly?: boolean;
  /** Origins besides the request's own Host that may send actions, for a proxy that rewrites Host. */
  readonly allowedOrigins?: readonly string[];
  /**
   * Host names the dashboard answers to: `name` on any port, or `name:port`, besides `localhost`,
   * `127.0.0.1` and `[::1]`, which it always answers to. A request addressed to another name gets
   * 421. Without guards the dashboard answers only to those loopback names unless this lists more,
   * so a site whose name is rebound to this machine (DNS rebinding) cannot read or act through it;
   * with guards the Host is left to them unless this is set.
   */
  readonly allowedHosts?: readonly string[];
  /**
   * Mount with no guard even when NODE_ENV is not `development`. Without a guard anyone who reaches
   * the app can read jobs and act on them; the module logs a warning at every start while it is open.
   */
  readonly allowUnguarded?: boolean;
}

/** The keys {@link SchedulerDashboardOptions} has. */
const DASHBOARD_OPTION_KEYS = ['path', 'guards', 'imports', 'actor', 'readOnly', 'revealPayloadsWhenReadOnly', 'allowedOrigins', 'allowedHosts', 'allowUnguarded'];

/** Refuses options that are not an object, or that hold a key the module does not take (`readonly: true` would leave actions on). */
export function checkDashboardOptions(options: SchedulerDashboardOptions): SchedulerDashboardOptions {
  return checkOptions(options ?? null, DASHBOARD_OPTION_KEYS, { what: 'SchedulerDashboardModule', argument: 'SchedulerDashboardModule options' })!;
}

/** A mount path: segments of letters, digits, `-`, `_` and `.`, without leading or trailing slash. */
export function mountPathOf(path: string | undefined): string {
  const value = (path ?? 'scheduler').replace(/^\/+|\/+$/g, '');
  if (!/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(value) || value.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw new InvalidArgumentError(`The dashboard path must be one or more URL segments of letters, digits, ".", "-" or "_", such as "scheduler" or "admin/jobs", got ${JSON.stringify(String(path)).slice(0, 60)}.`, 'path');
  }
  return value;
}

/**
 * Refuses to mount an open dashboard outside development, unless asked to in so many words: it
 * reads payloads and replays jobs, so an app that forgot its guard must not expose it.
 */
export function assertGuarded(options: SchedulerDashboardOptions, env: NodeJS.ProcessEnv = process.env): void {
  if ((options.guards?.length ?? 0) > 0 || options.allowUnguarded || env.NODE_ENV === 'development') return;
  throw new InvalidArgumentError(
    'SchedulerDashboardModule has no guard: pass guards (for example guards: [AdminGuard]), or allowUnguarded: true to mount it open on purpose; it mounts open by default only when NODE_ENV is "development".',
    'guards',
  );
}
