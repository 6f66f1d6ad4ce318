/**
 * Maps wire names to payload types, so `@Job` handlers and `SchedulerClient.enqueue` are checked
 * at compile time. Augment it once in your application:
 *
 * ```ts
 * declare module 'nestjs-durable-scheduler' {
 *   interface JobRegistry {
 *     'orders.confirm': { orderId: string };
 *   }
 * }
 * ```
 *
 * Until it is augmented, any string is a job name and any payload is accepted.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface JobRegistry {}

/** A wire name: a key of {@link JobRegistry}, or any string while the registry is empty. */
export type JobName = [keyof JobRegistry] extends [never] ? string : Extract<keyof JobRegistry, string>;

/** The payload type registered for a wire name; unchecked (`any`) for a name the registry lacks. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JobPayload<N extends string> = N extends keyof JobRegistry ? JobRegistry[N] : any;
