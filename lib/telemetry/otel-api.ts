import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';

/** The `@opentelemetry/api` module, as loaded here. Internal: no public signature names its types. */
export type Otel = typeof OtelApi;

let loaded: Otel | null | undefined;

/**
 * The host's `@opentelemetry/api`, or null when it is not installed. It is an optional peer: loaded
 * with `require` on first use, so an app without it pays nothing and a CommonJS app can still
 * `require` this package (a top-level `await import()` would make that impossible). The API keeps
 * its providers on a global, so this copy sees the SDK the host registered through its own.
 */
export function otelApi(): Otel | null {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)('@opentelemetry/api') as Otel;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}
