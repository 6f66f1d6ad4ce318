import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';

const run = promisify(execFile);
const root = process.cwd();
const NAME = 'nestjs-durable-scheduler';

/**
 * The root entry point's runtime names, exactly. Adding one is a deliberate act: it becomes API an
 * application can depend on (docs/entry-points.md says which entry point each group belongs to).
 */
const ROOT_VALUES = [
  'BatchNotFoundError', 'BatchWaitAbortedError', 'BatchWaitTimeoutError', 'CapabilityNotSupportedError', 'IllegalTransitionError', 'IncompatibleSchemaError', 'InjectJobContext',
  'InjectJobEntityManager', 'InvalidArgumentError', 'InvalidIdentifierError', 'JOB_CONTEXT',
  'JOB_ENTITY_MANAGER', 'Job', 'JobFailedError', 'JobNotFoundError', 'JobTimeoutError', 'JobWaitAbortedError',
  'JobWaitTimeoutError', 'JobWaiterClosedError', 'MysqlJobStore', 'OnJobTransition',
  'PayloadTooLargeError', 'PermanentJobError', 'PostgresJobStore', 'ProgressRefusedError', 'SCHEDULER_STORE',
  'ScheduleNotFoundError', 'SchedulerClient', 'SchedulerError', 'SchedulerModule',
  'SchedulerOrchestrator', 'SqliteJobStore', 'StoreBusyError', 'StoreUnavailableError',
  'TELEMETRY_ATTRIBUTES', 'TELEMETRY_METRICS', 'currentTraceContext', 'declaredScheduleId', 'defineJob', 'readVerifyRuns', 'recordVerifyRun', 'verifyHistory', 'visibleText',
];
/** The root entry point's type-only names, exactly. */
const ROOT_TYPES = [
  'AttemptHook', 'AttemptHookContext', 'AttemptStartedEvent', 'BatchCallbackIds', 'BatchCallbackJob', 'BatchCallbackKind', 'BatchCallbackSpec', 'BatchCallbacks', 'BatchCancelResult', 'BatchContext', 'BatchHandlerOptions', 'BatchJob', 'BatchJobHandler', 'BatchSummary', 'BlockedSequence', 'CancelResult', 'ClaimFailedEvent', 'ConcurrencyLimit', 'DebounceOptions', 'DeclaredSchedule', 'Deduplicated',
  'DefineJobOptions', 'DefinedJob', 'DefinedJobSpec', 'DefinedScheduleSpec', 'DependencyMode',
  'EnqueueBatchResult', 'EnqueueJobOptions', 'EnqueueResult', 'ErrorLogDetail', 'FailedJobState', 'FinishMode', 'HistoryEntry', 'HistoryPolicy',
  'JobBatchInfo', 'JobContext', 'JobHandler', 'JobHandlerOptions', 'JobLogFields', 'JobName', 'JobOptions', 'JobPage', 'JobPayload',
  'JobRecord', 'JobRegistry', 'JobSequenceInfo', 'JobSequenceOption', 'JobSnooze', 'JobSpec', 'JobState', 'JobStore', 'JobWaitResult', 'JobWindowInfo', 'LeaseLostEvent', 'LimitTarget', 'ListBatchesParams', 'ListBlockedSequencesParams', 'ListGroupsParams', 'ListJobsParams', 'MysqlJobStoreOptions', 'NodeHealth', 'NodeStateChangedEvent',
  'OnJobTransitionOptions', 'PayloadOf', 'PostgresJobStoreOptions', 'Rate', 'RateLimit', 'RateLimitStatus', 'RetryPolicy', 'Schedule',
  'ScheduleInput', 'ScheduleListParams', 'ScheduleSpec', 'ScheduleState', 'ScheduledVerifyOptions', 'SchedulerErrorCode', 'SchedulerLimits',
  'SchedulerLogger', 'SchedulerModuleExtras', 'SchedulerModuleOptions', 'SchedulerTelemetryOptions', 'SequenceAfterFailure',
  'SequenceOptions', 'SettledEvent', 'SqliteJobStoreOptions', 'StoreCapabilities', 'ThrottleOptions', 'TraceContext', 'TransitionEvent', 'UniqueKeyMode',
  'VerifyOptions', 'VerifyReport', 'VerifyRule', 'VerifyRun', 'VerifyViolation', 'VisibleTextOptions', 'WaitForOptions', 'WaitingGroup', 'WorkerNodeEvents', 'WorkerOptions',
];

/** The entry points package.json declares; a new one is as deliberate as a new root name. */
const ENTRY_POINTS = ['.', './worker', './testing', './dashboard', './terminus', './store-kit', './store-kit/conformance', './simulator'];
/** Entry points that only load inside Jest: the conformance suite imports @jest/globals, which throws elsewhere. */
const JEST_ONLY = new Set(['./store-kit/conformance']);

/** A few names each subpath must offer, so a barrel that lost its point fails here. */
const SUBPATH_NAMES: Record<string, string[]> = {
  './worker': ['WorkerNode', 'FunctionInvoker', 'resolveWorkerOptions', 'PermanentJobError', 'SeededRandom', 'JobWaiter'],
  './testing': ['SchedulerTestingModule', 'SchedulerTester', 'ManualTimers', 'DrainLimitError', 'SchedulerExpectationError', 'MemoryJobStore', 'ManualClock', 'SystemClock', 'FunctionInvoker', 'WorkerNode'],
  './store-kit': ['CheckedStore', 'paramsOf', 'checkClaimParams', 'checkCompleteParams', 'assertHistoryPolicy', 'normalizeEnqueueMany', 'transition', 'WakeHub'],
  './simulator': ['runSimulation', 'runBatch'],
  './dashboard': ['SchedulerDashboardModule', 'createDashboardHandler', 'startDashboardServer'],
  './terminus': ['SchedulerHealthIndicator', 'SchedulerHealthModule'],
  './store-kit/conformance': ['runConformanceSuite'],
};

const COMPILER_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  skipLibCheck: true,
  noEmit: true,
  types: ['node'],
};

function packageExports(): Record<string, string | { types: string; default: string }> {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | { types: string; default: string }> }).exports;
}

function specifier(subpath: string): string {
  return subpath === '.' ? NAME : `${NAME}/${subpath.slice(2)}`;
}

/** The declaration file TypeScript finds for `specifier`, from a file at the package's root (a self-reference). */
function typesOf(spec: string): string | undefined {
  return ts.resolveModuleName(spec, join(root, 'consumer.ts'), COMPILER_OPTIONS, ts.sys).resolvedModule?.resolvedFileName;
}

/** The names a module exports, split into those with a runtime value and type-only ones. */
function exportsOf(program: ts.Program, file: string): { values: string[]; types: string[]; symbols: ts.Symbol[] } {
  const checker = program.getTypeChecker();
  const symbols = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)!)!);
  const resolved = symbols.map((s) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s));
  const isValue = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Value) !== 0;
  return {
    values: symbols.filter((_, i) => isValue(resolved[i]!)).map((s) => s.name).sort(),
    types: symbols.filter((_, i) => !isValue(resolved[i]!)).map((s) => s.name).sort(),
    symbols: resolved,
  };
}

describe('the package entry points', () => {
  it('declares exactly the curated entry points, each with types and a default', () => {
    const entries = packageExports();
    expect(Object.keys(entries).filter((key) => key !== './package.json')).toEqual(ENTRY_POINTS);
    for (const subpath of ENTRY_POINTS) {
      expect(entries[subpath]).toEqual({ types: expect.stringMatching(/^\.\/dist\/lib\/.+\.d\.ts$/), default: expect.stringMatching(/^\.\/dist\/lib\/.+\.js$/) });
    }
  });

  it('the root exports exactly the curated names, from the built package as an application resolves it', () => {
    expect(ROOT_VALUES).toEqual([...ROOT_VALUES].sort());
    expect(ROOT_TYPES).toEqual([...ROOT_TYPES].sort());
    const file = typesOf(NAME);
    expect(file).toBe(join(root, 'dist/lib/index.d.ts'));
    const { values, types } = exportsOf(ts.createProgram([file!], COMPILER_OPTIONS), file!);
    expect(values).toEqual(ROOT_VALUES);
    expect(types).toEqual(ROOT_TYPES);
  });

  it('no root name leaks internals: none comes from a subpath-only layer or is marked @internal', () => {
    const file = join(root, 'lib/index.ts');
    const program = ts.createProgram([file], COMPILER_OPTIONS);
    for (const symbol of exportsOf(program, file).symbols) {
      for (const declaration of symbol.declarations ?? []) {
        const from = relative(join(root, 'lib'), declaration.getSourceFile().fileName);
        expect({ name: symbol.name, from, internalLayer: /^(simulator|cli|testing|store-kit|store\/memory)\//.test(from) }).toMatchObject({ internalLayer: false });
        const internal = ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'internal');
        expect({ name: symbol.name, internal }).toEqual({ name: symbol.name, internal: false });
      }
    }
  });

  it('each entry point resolves from the built dist through the package name: types, import and require', async () => {
    if (!existsSync(join(root, 'dist/lib/index.js'))) throw new Error('dist/ is missing; run npm run build before this test.');
    const entries = packageExports();
    for (const subpath of ENTRY_POINTS) {
      const { types } = entries[subpath] as { types: string };
      expect({ subpath, types: typesOf(specifier(subpath)) }).toEqual({ subpath, types: join(root, types) });
    }
    // A child process, because Node resolves a package's own name (a self-reference) from inside it.
    const script = `
      import { createRequire } from 'node:module';
      const require = createRequire(process.cwd() + '/consumer.cjs');
      const out = {};
      for (const spec of ${JSON.stringify(ENTRY_POINTS.map(specifier))}) {
        const url = import.meta.resolve(spec);
        if (${JSON.stringify([...JEST_ONLY].map(specifier))}.includes(spec)) {
          const failure = await import(spec).then(() => 'loaded', (error) => error.message);
          out[spec] = { url, failure, required: require.resolve(spec) };
        } else {
          out[spec] = { url, imported: Object.keys(await import(spec)).sort(), required: Object.keys(require(spec)).sort() };
        }
      }
      console.log(JSON.stringify(out));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '--no-warnings', '-e', script], { cwd: root });
    const loaded = JSON.parse(stdout) as Record<string, { url: string; imported: string[]; required: string[] | string; failure?: string }>;
    for (const subpath of ENTRY_POINTS) {
      const spec = specifier(subpath);
      const { default: main } = entries[subpath] as { default: string };
      expect(loaded[spec]!.url).toBe(`file://${join(root, main)}`);
      if (JEST_ONLY.has(subpath)) {
        // It resolves for import and require, and outside Jest it fails on loading @jest/globals.
        expect(loaded[spec]).toMatchObject({ required: join(root, main), failure: expect.stringContaining('@jest/globals') });
        continue;
      }
      expect(loaded[spec]!.required).toEqual(loaded[spec]!.imported);
      if (subpath === '.') expect(loaded[spec]!.imported).toEqual(ROOT_VALUES);
      else expect(loaded[spec]!.imported).toEqual(expect.arrayContaining(SUBPATH_NAMES[subpath]!));
    }
  }, 60_000);
});
