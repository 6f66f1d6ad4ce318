import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'nestjs-durable-scheduler';
/** What a node reports when its package.json cannot be read (a bundler that dropped it). */
export const UNKNOWN_VERSION = 'unknown';

let cached: string | undefined;

/**
 * This library's version, from its package.json, read once per process. The file is found by
 * walking up from this module, which sits two directories below it in the sources (lib/worker)
 * and three in the package (dist/lib/worker); the walk stops at the first package.json that names
 * this package, so an application's own package.json is never taken for it.
 */
export function packageVersion(): string {
  cached ??= readVersion(dirname(fileURLToPath(import.meta.url)));
  return cached;
}

function readVersion(start: string): string {
  for (let dir = start, up = 0; up < 6; dir = dirname(dir), up++) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    try {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === PACKAGE_NAME && typeof manifest.version === 'string' && manifest.version !== '') return manifest.version;
    } catch {
      // An unreadable manifest on the way up is not ours; keep walking.
    }
  }
  return UNKNOWN_VERSION;
}
