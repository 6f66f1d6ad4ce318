export { verifyHistory, type VerifyOptions, type VerifyReport } from './verify-history.js';
export { checkJobEntries, VERIFY_RULES, type JobCheck, type VerifyRule, type VerifyViolation } from './history-rules.js';
