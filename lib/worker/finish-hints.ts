import { isTerminalState } from '../core/index.js';
import type { OperatorStore } from '../store/index.js';
import type { NodeEventEmitter, SettledEvent } from './node-events.js';

/**
 * Tells the waiter a job may have finished, sooner than its next poll: in a Nest app, the local
 * worker's applied outcomes (with the job's id), and the store's hints that jobs finished in
 * another process (`null`: some jobs, which ones unknown). `subscribe` is called when the first job
 * is waited on and its returned function when the last wait ends, so a waiter nobody uses listens
 * to nothing.
 */
export interface FinishHints {
  subscribe(listener: (jobId: string | null) => void): () => void;
}

/**
 * The store's hints that jobs finished in other processes (PostgreSQL's NOTIFY) as
 * {@link FinishHints}: a wait on a job another node ran ends without waiting for a poll. The
 * subscription opens when the first job is waited on and closes when the last wait ends.
 */
export function storeFinishHints(store: Pick<OperatorStore, 'subscribeFinishHints'>): FinishHints {
  return {
    subscribe(listener) {
      let closed = false;
      const opened = store.subscribeFinishHints({ listener: () => !closed && listener(null) }).catch(() => undefined);
      return () => {
        closed = true;
        void opened.then((subscription) => subscription?.close());
      };
    },
  };
}

/** Several {@link FinishHints} as one. */
export function allFinishHints(...sources: readonly FinishHints[]): FinishHints {
  return {
    subscribe(listener) {
      const unsubscribers = sources.map((source) => source.subscribe(listener));
      return () => unsubscribers.forEach((unsubscribe) => unsubscribe());
    },
  };
}

/** A node's applied terminal outcomes as {@link FinishHints}: a wait on a job this process ran ends without waiting for a poll. */
export function nodeFinishHints(events: NodeEventEmitter): FinishHints {
  return {
    subscribe(listener) {
      const onSettled = (event: SettledEvent) => {
        if (event.status === 'applied' && event.state !== undefined && isTerminalState(event.state)) listener(event.jobId);
      };
      events.on('settled', onSettled);
      return () => void events.off('settled', onSettled);
    },
  };
}
