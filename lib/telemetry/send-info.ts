/** What one enqueue call writes, for its `send` span and the sent-messages counter. */
export interface SendInfo {
  readonly queue: string;
  /** The wire name, when the call writes jobs of one name. */
  readonly name?: string;
  readonly count: number;
}
