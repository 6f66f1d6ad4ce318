/** What one enqueue call writes, for its `send` span and the sent-messages counter. */
export interface SendInfo {
  /** How many jobs the call writes to each queue. */
  readonly queues: ReadonlyMap<string, number>;
  /** The wire name, when the call writes jobs of one name. */
  readonly name?: string;
}

/** The jobs a call writes, in all queues. */
export function sendCount(info: SendInfo): number {
  let count = 0;
  for (const n of info.queues.values()) count += n;
  return count;
}
