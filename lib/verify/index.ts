export { verifyHistory, type VerifyOptions, type VerifyReport } from './verify-history.js';
export { checkJobEntries, VERIFY_RULES, type JobCheck, type VerifyRule, type VerifyViolation } from './history-rules.js';
export { readVerifyRuns, recordVerifyRun, rangeText, RECORDED_VIOLATIONS, VERIFY_RUN_ACTION, type VerifyRun } from './verify-runs.js';
export { checkScheduledVerifyOptions, ScheduledVerify, VERIFY_TASK, type ScheduledVerifyOptions } from './scheduled-verify.js';
