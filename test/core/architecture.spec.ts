import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

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

/** lib's import graph: every relative import and re-export, type-only ones included. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .filter(({ fileName }) => fileName.startsWith('.'))
      .map(({ fileName }) => {
        const target = resolve(dirname(file), fileName).replace(/\.js$/, '.ts');
        return !existsSync(target) && existsSync(target.replace(/\.ts$/, '/index.ts')) ? target.replace(/\.ts$/, '/index.ts') : target;
      })
      .filter((target) => existsSync(target));
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components with more than one file (or a file importing itself): Tarjan's algorithm. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const LAYERS = ['core', 'store', 'worker', 'nest', 'cli', 'simulator', 'store-kit', 'testing', 'dashboard', 'telemetry', 'terminus'];
/**
 * Which layers each layer may import. Dependencies point one way: core -> store -> worker -> nest.
 * The entry points of their own sit beside nest: store-kit (for adapter authors) never imports it,
 * so a store adapter does not pull NestJS in; testing (an app's tests) drives the app's own
 * SchedulerModule, so it may import nest, and nothing but the tests imports testing.
 */
const ALLOWED: Record<string, string[]> = {
  core: ['core'],
  store: ['core', 'store'],
  worker: ['core', 'store', 'worker'],
  // The module wires telemetry in when @opentelemetry/api is installed.
  nest: ['core', 'store', 'worker', 'telemetry', 'nest'],
  // The CLI serves the standalone dashboard, through its Nest-free part (checked below).
  cli: ['core', 'store', 'worker', 'cli', 'dashboard'],
  simulator: ['core', 'store', 'worker', 'simulator'],
  // The conformance suite drives the store's observer cursors through the worker's dispatcher.
  'store-kit': ['core', 'store', 'worker', 'store-kit'],
  // The testing kit wraps SchedulerModule and drives its worker; nest never imports it back.
  testing: ['core', 'store', 'worker', 'nest', 'testing'],
  // The dashboard sits beside nest and reaches the store through its contract; its Nest module
  // imports nest's store token only (checked below).
  dashboard: ['core', 'store', 'dashboard', 'nest'],
  // Telemetry sits beside nest: it reaches the store through its contract and the node through its events and hooks.
  telemetry: ['core', 'store', 'worker', 'telemetry'],
  // The health indicator reads the orchestrator's node and the store token.
  terminus: ['core', 'store', 'worker', 'nest', 'terminus'],
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

  it('loads @opentelemetry/api only through otel-api.ts, so an app without it loads nothing of it', () => {
    for (const file of sources(LIB)) {
      const text = readFileSync(file, 'utf8');
      const runtime = [...text.matchAll(/^\s*import\s+(?!type\b)[^'"]*from\s+'(@opentelemetry\/[^']+)'/gm)].map((m) => m[1]);
      expect({ file: relative(LIB, file), runtime }).toEqual({ file: relative(LIB, file), runtime: [] });
    }
    expect(readFileSync(join(LIB, 'telemetry', 'otel-api.ts'), 'utf8')).toMatch(/createRequire\(import\.meta\.url\)\('@opentelemetry\/api'\)/);
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

  it('keeps NestJS out of the dashboard except its module, which takes only the store token, the handler registry and the orchestrator from nest', () => {
    const files = sources(join(LIB, 'dashboard'));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      // index.ts is the subpath's entry point: it exports the module beside the Nest-free server.
      const inModule = relative(join(LIB, 'dashboard'), file).startsWith('nest/') || file.endsWith('dashboard/index.ts');
      for (const spec of imports(file)) {
        const target = spec.startsWith('.') ? relative(LIB, join(file, '..', spec)) : spec;
        const nest = target.startsWith('@nestjs') || target.startsWith('nest/') || target.startsWith('dashboard/nest/');
        const ok = inModule ? !target.startsWith('nest/') || ['nest/scheduler.tokens.js', 'nest/job-handler.registry.js', 'nest/scheduler.orchestrator.js'].includes(target) : !nest;
        expect({ file: relative(LIB, file), spec, ok }).toMatchObject({ ok: true });
      }
    }
    for (const file of sources(join(LIB, 'cli'))) {
      for (const spec of imports(file).filter((s) => s.startsWith('.'))) {
        const target = relative(LIB, join(file, '..', spec));
        if (target.startsWith('dashboard/')) expect({ file: relative(LIB, file), target, ok: target.startsWith('dashboard/http/') }).toMatchObject({ ok: true });
      }
    }
  });

  // A cycle, even through type-only imports, means two files can only be understood (and moved)
  // together; the store contract is a leaf so that nothing has to import its implementations back.
  it('has no import cycles in lib, type-only imports and re-exports included', () => {
    const graph = importGraph(sources(LIB));
    expect(graph.size).toBeGreaterThan(100);
    expect(cycles(graph).map((component) => component.map((file) => relative(LIB, file)).sort())).toEqual([]);
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
