import {
  assertDelayMs,
  assertInstant,
  assertNonEmptyString,
  assertPositiveInteger,
  assertQueueName,
  InvalidArgumentError,
  showValue,
} from '../../core/index.js';
import type { NodeBeatParams, NodeListParams, NodePruneParams, NodeRef } from '../job-store.types.js';
import type { DriverNodeBeatParams } from './store-driver.js';
import { MAX_BATCH, optionalParamsOf, paramsOf } from './store-params.js';

/** Nodes a registry listing returns when it asks for no `limit`. */
export const DEFAULT_NODE_LIST_LIMIT = 100;
/** Most registry rows one prune pass may delete. */
export const MAX_NODE_PRUNE_BATCH = 10_000;
/** The longest node id a store keeps: the bound a claim puts on its worker id. */
const MAX_NODE_ID_LENGTH = 256;
/** The largest pid, concurrency and running count a store keeps (32-bit integer columns). */
const MAX_PID = 2_147_483_647;
const MAX_NODE_COUNT = 1_000_000;

function wholeNumber(value: unknown, argument: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${argument} must be a whole number from ${min} to ${max}, got ${showValue(value)}.`, argument);
  }
  return value;
}

/** Checks a node's beat: its id, host, pid, version, queues, concurrency and running count. */
export function checkNodeBeatParams(params: NodeBeatParams): DriverNodeBeatParams {
  paramsOf('nodeBeat', params, '{ id, host, pid, version, queues, concurrency, running }');
  const { queues } = params;
  if (!Array.isArray(queues) || queues.length === 0 || queues.length > MAX_BATCH) {
    throw new InvalidArgumentError(`queues must be an array of 1 to ${MAX_BATCH} queue names.`, 'queues');
  }
  return {
    id: assertNonEmptyString(params.id, 'id', MAX_NODE_ID_LENGTH),
    host: assertNonEmptyString(params.host, 'host', 255),
    pid: wholeNumber(params.pid, 'pid', 0, MAX_PID),
    version: assertNonEmptyString(params.version, 'version', 64),
    queues: queues.map((queue, i) => assertQueueName(queue, `queues[${i}]`)),
    concurrency: wholeNumber(params.concurrency, 'concurrency', 1, MAX_NODE_COUNT),
    running: wholeNumber(params.running, 'running', 0, MAX_NODE_COUNT),
  };
}

/** Checks a node stop's params and returns the node's id. */
export function checkNodeRef(method: string, params: NodeRef): string {
  return assertNonEmptyString(paramsOf(method, params, '{ id }').id, 'id', MAX_NODE_ID_LENGTH);
}

/** Checks a registry listing's params: `seenSince` (null when absent) and the page size ({@link DEFAULT_NODE_LIST_LIMIT} when absent). */
export function checkNodeListParams(params: NodeListParams | undefined): { seenSince: Date | null; limit: number } {
  const p = optionalParamsOf('nodeList', params, '{ seenSince?, limit? }') ?? {};
  return {
    seenSince: p.seenSince === undefined ? null : new Date(assertInstant(p.seenSince, 'seenSince')),
    limit: p.limit === undefined ? DEFAULT_NODE_LIST_LIMIT : assertPositiveInteger(p.limit, 'limit', MAX_BATCH),
  };
}

/** Checks a registry prune pass's params: the age past which a node goes, and the batch. */
export function checkNodePruneParams(params: NodePruneParams): { olderThanMs: number; limit: number } {
  const checked = paramsOf('nodePrune', params, '{ olderThanMs, limit }');
  return {
    olderThanMs: assertDelayMs(checked.olderThanMs, 'olderThanMs'),
    limit: assertPositiveInteger(checked.limit, 'limit', MAX_NODE_PRUNE_BATCH),
  };
}
