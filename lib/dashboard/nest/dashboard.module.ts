import { All, Controller, Inject, Injectable, Logger, Module, Req, Res, UseGuards, type DynamicModule, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JobHandlerRegistry } from '../../nest/job-handler.registry.js';
import { SchedulerOrchestrator } from '../../nest/scheduler.orchestrator.js';
import { SCHEDULER_STORE } from '../../nest/scheduler.tokens.js';
import type { JobStore } from '../../store/index.js';
import { createMountedDashboardHandler, type DashboardHandler } from '../http/dashboard-handler.js';
import { requestUrl } from '../http/dashboard-request.js';
import { checkAllowedHosts, hostAllowed, LOOPBACK_HOSTS, refuseHost } from '../http/dashboard-security.js';
import { assertGuarded, checkDashboardOptions, mountPathOf, type SchedulerDashboardOptions } from './dashboard-options.js';
import { localHandlers } from './local-handlers.js';

const DASHBOARD_OPTIONS = Symbol('SCHEDULER_DASHBOARD_OPTIONS');

type ExpressRequest = IncomingMessage & { originalUrl?: string; params?: Record<string, unknown>; body?: unknown; user?: unknown };

/**
 * The mount point as the browser sees it and the path below it, from the request's own path and
 * the segments the wildcard matched, so that a global prefix (`/api/scheduler`) needs no option.
 */
export function routeOf(req: ExpressRequest, mountPath: string): { base: string; rest: string } {
  const pathname = requestUrl(req).pathname;
  const matched = req.params?.['rest'];
  const depth = Array.isArray(matched) ? matched.length : typeof matched === 'string' && matched ? matched.split('/').length : 0;
  const parts = pathname.replace(/\/+$/, '').split('/');
  const cut = parts.length - depth;
  const base = parts.slice(0, cut).join('/');
  // The base goes into every link, the redirect after an action and the cookie's Path: it must be
  // plain segments ending in the mount path, or a hand-made request could point them elsewhere.
  const safe = /^(\/[A-Za-z0-9._~-]+)+$/.test(base) && base.endsWith(`/${mountPath}`) && !base.split('/').includes('..');
  return { base: safe ? base : `/${mountPath}`, rest: parts.slice(cut).join('/') };
}

/**
 * The mount paths of each app's dashboards, keyed by the app's HttpAdapterHost (one per app), so
 * a second mount is noticed in the app that has it and nowhere else.
 */
const mounts = new WeakMap<object, Set<string>>();

/** Finds the app's scheduler store, handlers and node, and serves the dashboard's requests. */
@Injectable()
class DashboardHost implements OnModuleInit, OnModuleDestroy {
  private handler: DashboardHandler | null = null;
  private readonly logger = new Logger('SchedulerDashboard');
  /** The Host names served, or null to leave the Host to the guards. */
  private readonly allowedHosts: readonly string[] | null;

  constructor(
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
    @Inject(DASHBOARD_OPTIONS) private readonly options: SchedulerDashboardOptions,
    @Inject(HttpAdapterHost) private readonly app: HttpAdapterHost,
  ) {
    const extra = options.allowedHosts;
    this.allowedHosts = extra ? [...LOOPBACK_HOSTS, ...extra] : options.guards?.length ? null : LOOPBACK_HOSTS;
  }

  onModuleInit(): void {
    this.claimMount(`/${mountPathOf(this.options.path)}`);
    let store: JobStore;
    let registry: JobHandlerRegistry;
    let orchestrator: SchedulerOrchestrator;
    try {
      store = this.moduleRef.get<JobStore>(SCHEDULER_STORE, { strict: false });
      registry = this.moduleRef.get(JobHandlerRegistry, { strict: false });
      orchestrator = this.moduleRef.get(SchedulerOrchestrator, { strict: false });
    } catch {
      throw new Error('SchedulerDashboardModule found no scheduler store: import SchedulerModule.forRoot(...) in the same app.');
    }
    const { readOnly, revealPayloadsWhenReadOnly, allowedOrigins } = this.options;
    // The handlers are read when the Workers page is drawn, once the app has booted and registered them all.
    const handlers = () => localHandlers(registry, orchestrator);
    this.handler = createMountedDashboardHandler({ store, readOnly, revealPayloadsWhenReadOnly, allowedOrigins, logError: (line) => this.logger.error(line) }, handlers);
    const path = `/${mountPathOf(this.options.path)}`;
    if (!this.options.guards?.length) {
      this.logger.warn(`The scheduler dashboard at ${path} has no guard: anyone who reaches this app can read its jobs${readOnly ? '' : ' and act on them'}.`);
    }
  }

  onModuleDestroy(): void {
    mounts.get(this.app)?.delete(`/${mountPathOf(this.options.path)}`);
  }

  /**
   * Two dashboards at one path: the first registered route answers every request, so the second's
   * options (its guards, read-only mode, actor) would silently never apply. That is refused. A
   * second dashboard at another path is allowed (a read-only one for support, say), and said.
   */
  private claimMount(path: string): void {
    const paths = mounts.get(this.app) ?? new Set<string>();
    mounts.set(this.app, paths);
    if (paths.has(path)) {
      throw new Error(
        `SchedulerDashboardModule is mounted twice at ${path}: the second mount would never answer, and its options would not apply. Import SchedulerDashboardModule.forRoot(...) once, or give the second one its own path.`,
      );
    }
    if (paths.size > 0) this.logger.log(`A second scheduler dashboard is mounted at ${path}, besides ${[...paths].join(', ')}; each answers with its own options.`);
    paths.add(path);
  }

  async serve(req: ExpressRequest, res: ServerResponse): Promise<void> {
    if (this.allowedHosts && !hostAllowed(req.headers.host, this.allowedHosts)) {
      refuseHost(res, this.allowedHosts);
      return;
    }
    const { base, rest } = routeOf(req, mountPathOf(this.options.path));
    let actor = '';
    try {
      actor = this.options.actor ? (this.options.actor(req)?.trim() ?? '') : 'dashboard';
    } catch (error) {
      // Nobody to audit: the handler refuses every action, and pages still render.
      this.logger.warn(`The dashboard's actor callback threw (${error instanceof Error ? error.name : 'a non-error'}); actions are refused for this request.`);
    }
    await this.handler!(req, res, { base, rest, actor });
  }
}

/**
 * The operator dashboard, mounted in the host app. It reads and acts through the app's
 * scheduler store, on PostgreSQL and SQLite, behind the guards you give it.
 *
 * @example
 * SchedulerDashboardModule.forRoot({ guards: [AdminGuard], actor: (req) => req.user?.email })
 */
@Module({})
export class SchedulerDashboardModule {
  /** Mounts the dashboard at `options.path` (default `/scheduler`). */
  static forRoot(options: SchedulerDashboardOptions = {}): DynamicModule {
    checkDashboardOptions(options);
    const path = mountPathOf(options.path);
    assertGuarded(options);
    checkAllowedHosts(options.allowedHosts);

    @Controller(path)
    class SchedulerDashboardController {
      constructor(@Inject(DashboardHost) private readonly host: DashboardHost) {}

      @All()
      root(@Req() req: ExpressRequest, @Res() res: ServerResponse): Promise<void> {
        return this.host.serve(req, res);
      }

      @All('*rest')
      page(@Req() req: ExpressRequest, @Res() res: ServerResponse): Promise<void> {
        return this.host.serve(req, res);
      }
    }
    if (options.guards?.length) UseGuards(...options.guards)(SchedulerDashboardController);

    return {
      module: SchedulerDashboardModule,
      imports: options.imports ?? [],
      controllers: [SchedulerDashboardController],
      providers: [{ provide: DASHBOARD_OPTIONS, useValue: options }, DashboardHost],
    };
  }
}
