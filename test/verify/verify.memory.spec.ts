import { describe } from '@jest/globals';
import type { HistoryEntry } from '../../lib/store/index.js';
import type { MemoryTables } from '../../lib/store/memory/memory-tables.js';
import { MemoryJobStore } from '../../lib/testing/index.js';
import { verifyCases } from './verify.cases.js';

describe('verifyHistory on the memory store', () => {
  verifyCases(async () => {
    const store = new MemoryJobStore();
    // The store keeps its tables to itself; a broken store is simulated by writing them directly.
    const tables = (store as unknown as { tables: MemoryTables }).tables;
    return {
      store,
      writeEntry: async (jobId, state, attempt) => {
        const id = Math.max(0, ...tables.history.map((e) => e.id)) + 1;
        const entry: HistoryEntry = { id, position: String(id), jobId, name: tables.jobs.get(jobId)!.name, at: new Date(store.clock.now()), state, attempt, error: null };
        tables.history.push(entry);
      },
      deleteRow: async (jobId) => {
        tables.jobs.delete(jobId);
      },
      close: async () => {},
    };
  });
});
