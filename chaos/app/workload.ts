/**
 * The chaos workload's wire names and payloads. Every handler records its executions; what it
 * does besides depends on its kind:
 * - `chaos.plain`, `chaos.step` (nodes of dependency graphs): succeed;
 * - `chaos.failing`: throw on attempts 1..failures, then succeed;
 * - `chaos.poison`: always throw, so it is dead-lettered after maxAttempts;
 * - `chaos.limited`: succeed, at most LIMIT at once per tenant key, cluster-wide.
 */
export interface ChaosPayload {
  /** How long the handler works, split around its write through the attempt's EntityManager. */
  readonly ms: number;
  /** `chaos.failing`: attempts that throw before one succeeds. */
  readonly failures?: number;
  /** `chaos.limited`: the tenant whose key limits it. */
  readonly tenant?: string;
}

export const POISON_MAX_ATTEMPTS = 3;
/** Generous, so that the attempts kills and pauses cost never exhaust a job that should succeed. */
export const DEFAULT_MAX_ATTEMPTS = 12;
export const TENANT_LIMIT = 2;

export const tenantKey = (payload: ChaosPayload) => `tenant:${payload.tenant ?? 'none'}`;

declare module '../../lib/nest/interfaces/job-registry.interface.js' {
  interface JobRegistry {
    'chaos.plain': ChaosPayload;
    'chaos.step': ChaosPayload;
    'chaos.failing': ChaosPayload;
    'chaos.poison': ChaosPayload;
    'chaos.limited': ChaosPayload;
  }
}
