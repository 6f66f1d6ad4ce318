// jest's node environment, pointed at this worker's own embedded PostgreSQL (global-setup.mjs).
// It sets the worker process's DATABASE_URL before the test's sandbox copies the environment, so
// the tests and every process they start see the same server. With DATABASE_URL given by the user
// there is one server and one worker, and this changes nothing.
import { TestEnvironment } from 'jest-environment-node';

export default class WorkerDatabaseEnvironment extends TestEnvironment {
  constructor(config, context) {
    const own = process.env[`DURABLE_SCHEDULER_TEST_DATABASE_URL_${process.env.JEST_WORKER_ID ?? '1'}`];
    if (own) process.env.DATABASE_URL = own;
    super(config, context);
  }
}
