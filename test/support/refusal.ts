import { expect } from '@jest/globals';
import { InvalidArgumentError } from '../../lib/index.js';

/** The typed, one-sentence refusal `run` ends with (a throw or a rejection). */
export async function refusal(run: () => unknown): Promise<string> {
  let error: unknown;
  try {
    await run();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect((error as Error).message).toMatch(/^[^\n]+\.$/);
  return (error as Error).message;
}
