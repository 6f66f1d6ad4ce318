import { v5 as uuidV5 } from 'uuid';
import { InvalidArgumentError } from './errors/index.js';
import { canonicalUuid, uuidBytes } from './uuid-text.js';

/** The UUIDv5 namespace of occurrence ids, shared with the Rust scheduler the contract comes from. */
export const OCCURRENCE_NAMESPACE = '6b9d1c2e-7a44-4f8e-9c10-2d3b4c5d6e7f';

// Parsed once: given as text, uuid parses (and validates) the namespace twice on every call, and
// a worker derives an occurrence id for every job it claims.
const NAMESPACE_BYTES = uuidBytes(OCCURRENCE_NAMESPACE);
const NANOS_PER_MILLI = 1_000_000n;
const MAX_MAGNITUDE = (1n << 128n) - 1n;

/**
 * Deterministic ids for occurrences: the same schedule firing at the same instant always gets the
 * same id, on every node and after every redelivery, so consumers can dedupe on it.
 */
export const OccurrenceId = Object.freeze({
  /**
   * The UUIDv5 over 33 name bytes: the 16 bytes of `scheduleId`, a sign byte (1 at or after the Unix
   * epoch, 0 before), and the offset's magnitude in nanoseconds as a 16-byte big-endian integer.
   *
   * @param scheduleId UUID text of any version and variant (see {@link canonicalUuid}): the schedule's
   *   id, or a one-shot job's own id
   * @param scheduledFor the instant, as a Date or as nanoseconds since the epoch
   */
  derive(scheduleId: string, scheduledFor: Date | bigint): string {
    // Any 128-bit UUID text, as the Rust scheduler takes it: the version and variant bits are
    // name bytes like any other, so an id minted elsewhere derives the same occurrence id there.
    const canonical = typeof scheduleId === 'string' ? canonicalUuid(scheduleId) : null;
    if (canonical === null) {
      throw new InvalidArgumentError(`scheduleId must be a UUID, got ${JSON.stringify(String(scheduleId)).slice(0, 80)}.`, 'scheduleId');
    }
    const scheduleBytes = uuidBytes(canonical);
    let nanos: bigint;
    if (typeof scheduledFor === 'bigint') {
      nanos = scheduledFor;
    } else {
      const ms = scheduledFor instanceof Date ? scheduledFor.getTime() : Number.NaN;
      if (!Number.isFinite(ms)) throw new InvalidArgumentError('scheduledFor must be a valid Date.', 'scheduledFor');
      nanos = BigInt(ms) * NANOS_PER_MILLI;
    }
    const magnitude = nanos < 0n ? -nanos : nanos;
    if (magnitude > MAX_MAGNITUDE) throw new InvalidArgumentError('scheduledFor is too far from the epoch to encode.', 'scheduledFor');

    const name = new Uint8Array(33);
    name.set(scheduleBytes, 0);
    name[16] = nanos >= 0n ? 1 : 0;
    let rest = magnitude;
    for (let i = 32; i >= 17; i--) {
      name[i] = Number(rest & 0xffn);
      rest >>= 8n;
    }
    return uuidV5(name, NAMESPACE_BYTES);
  },
});
