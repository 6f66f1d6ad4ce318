/**
 * The abort of one attempt, with its AbortController made only when something first asks for the
 * signal or aborts. Making one per attempt cost a busy worker about 3 % of its CPU (Node builds an
 * EventTarget for each), and most handlers never look at their signal. A signal first asked for
 * after an abort comes back already aborted, with the reason given, as an eager one would be.
 */
export class AttemptAbort {
  private controller: AbortController | undefined;
  private early: { readonly reason: unknown } | undefined;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.early) this.controller.abort(this.early.reason);
    }
    return this.controller.signal;
  }

  /** Why the attempt was aborted, or undefined while it was not; read without building a signal. */
  get reason(): unknown {
    return this.controller ? (this.controller.signal.aborted ? this.controller.signal.reason : undefined) : this.early?.reason;
  }

  /** Aborts the attempt; only the first reason counts, as with AbortController. */
  abort(reason?: unknown): void {
    if (this.controller) this.controller.abort(reason);
    else this.early ??= { reason };
  }
}
