// Reads jest --json result files (and the chaos run's --result file) and prints one line per run,
// then the totals alone on the last line. A missing or unreadable file counts as a failure: the
// run did not finish.
import { readFileSync } from 'node:fs';

let passed = 0;
let failed = 0;
for (const file of process.argv.slice(2)) {
  try {
    const result = JSON.parse(readFileSync(file, 'utf8'));
    if (result.kind === 'chaos') {
      // The chaos run (chaos/run.mjs --result) counts as one test.
      const ok = result.passed === true;
      passed += ok ? 1 : 0;
      failed += ok ? 0 : 1;
      console.log(`${file}: chaos run, seed ${result.seed}, ${result.durationSeconds} s of faults: ${ok ? 'passed' : 'FAILED'}`);
      continue;
    }
    const brokenSuites = result.numRuntimeErrorTestSuites ?? 0;
    passed += result.numPassedTests;
    failed += result.numFailedTests + brokenSuites;
    console.log(`${file}: ${result.numPassedTests} passed, ${result.numFailedTests} failed, ${brokenSuites} suites failed to run, ${result.numPendingTests} pending`);
    if (result.numPendingTests > 0 || result.numTodoTests > 0) failed += result.numPendingTests + result.numTodoTests;
  } catch (error) {
    console.log(`${file}: no result (${error.message})`);
    failed += 1;
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
