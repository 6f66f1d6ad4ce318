/**
 * `nestjs-durable-scheduler/store-kit/conformance`: the storage contract as executable cases, the
 * suite every store in this package passes. Call `runConformanceSuite(target)` inside a Jest
 * `describe`; the target opens a fresh, empty store of your adapter for each case. It imports
 * `@jest/globals` (an optional peer dependency), so load it only from a Jest test file.
 */
export { runConformanceSuite } from './conformance-suite.js';
export type { ConformanceTarget, OpenOptions, StoreUnderTest, SuiteContext } from './harness.js';
