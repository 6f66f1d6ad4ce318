export { SchedulerDashboardModule } from './nest/dashboard.module.js';
export type { SchedulerDashboardOptions } from './nest/dashboard-options.js';
export { createDashboardHandler, type DashboardHandler, type DashboardHandlerOptions, type DashboardRoute } from './http/dashboard-handler.js';
export type { DashboardStore } from './http/dashboard-store.js';
export { startDashboardServer, type DashboardServer, type DashboardServerOptions } from './http/dashboard-server.js';
