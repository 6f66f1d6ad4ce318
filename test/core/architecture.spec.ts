import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const LIB = join(process.cwd(), 'lib');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sources(path);
    return entry.endsWith('.ts') ? [path] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+'([^']+)'/gm)].map((m) => m[1]!);
}

const LAYERS = ['core', 'store', 'worker', 'nest', 'cli', 'simulator', 'store-kit', 'testing'];
/**
 * Which layers each layer may import. Dependencies point one way: core -> store -> worker -> nest.
 * The entry points of their own (store-kit for adapter authors, testing for an app's tests) sit
 * beside nest, never on top of it: a store adapter or a test helper must not pull NestJS in.
 */
const ALLOWED: Record<string, string[]> = {
  core: ['core'],
  store: ['core', 'store'],
  worker: ['core', 'store', 'worker'],
  nest: ['core', 'store', 'worker', 'nest'],
  cli: ['core', 'store', 'worker', 'cli'],
  simulator: ['core', 'store', 'worker', 'simulator'],
  // The conformance suite drives the store's observer cursors through the worker's dispatcher.
  'store-kit': ['core', 'store', 'worker', 'store-kit'],
  testing: ['core', 'store', 'worker', 'testing'],
};

describe('architecture', () => {
  it('keeps lib/core pure: no I/O modules, no Nest or TypeORM, no wall clock', () => {
    const files = sources(join(LIB, 'core'));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const spec of imports(file)) {
        expect({ file: relative(LIB, file), spec, ok: !/^(node:(fs|net|http|https|child_process|dgram|worker_threads)|typeorm|@nestjs|pg|better-sqlite3)/.test(spec) }).toMatchObject({ ok: true });
      }
      expect({ file: relative(LIB, file), wallClock: /Date\.now\(|new Date\(\)|performance\.now\(|setTimeout\(|setInterval\(/.test(text) }).toMatchObject({ wallClock: false });
    }
  });

  it('points dependencies one way between layers', () => {
    for (const layer of LAYERS) {
      let files: string[] = [];
      try {
        files = sources(join(LIB, layer));
      } catch {
        continue; // a layer that does not exist yet has nothing to check
      }
      for (const file of files) {
        for (const spec of imports(file).filter((s) => s.startsWith('.'))) {
          const target = relative(LIB, join(file, '..', spec)).split('/')[0]!;
          if (!LAYERS.includes(target)) continue;
          expect({ file: relative(LIB, file), imports: target, allowed: ALLOWED[layer]!.includes(target) }).toMatchObject({ allowed: true });
        }
      }
    }
  });

  // A call to the real timers passes an expression; `setTimeout(callback: ...)` is NodeTimers defining its own.
  it('keeps the simulator on virtual time: no wall clock, no timers, no unseeded randomness outside its command line', () => {
    const files = sources(join(LIB, 'simulator')).filter((file) => !file.endsWith('sim.main.ts'));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect({ file: relative(LIB, file), nondeterministic: /Date\.now\(|new Date\(\)|performance\.now\(|Math\.random\(|(?<![.\w])setTimeout\((?!\w+:)|(?<![.\w])setInterval\(|randomBytes|randomUUID/.test(text) }).toMatchObject({ nondeterministic: false });
    }
  });
});
