import { describe, expect, it } from '@jest/globals';
import type { JobRow } from '../../lib/store/job-row.js';
import { PostgresClaimPath } from '../../lib/store/postgres/postgres-claim.js';
import type { LaneClaimResult } from '../../lib/store/postgres/queries/claim-lanes-fair.query.js';
import type { RoundTurns } from '../../lib/store/postgres/queries/claim-limited.query.js';

// The choice among PostgreSQL's claim statements (postgres-claim.ts), with the statements replaced
// by recorders: what the path sends, in which order, and what it tells its store. What each
// statement does on a real server is tested in postgres-group-claim.spec.ts and the conformance suite.

const row = (n: number, groupKey: string): JobRow => ({ id: `id-${n}`, seq: n, priority: 0, runAt: n, groupKey }) as unknown as JobRow;
const params = { workerId: 'w', limit: 100, queues: ['default'], leaseMs: 60_000, includeLapsed: false };

/** A path whose unlimited claim always finds jobs in lanes, and whose lane claim answers with `lanes(call)`. */
function path(lanes: (call: number) => LaneClaimResult) {
  const sent: string[] = [];
  const signals = { again: 0, held: [] as boolean[] };
  const turns: RoundTurns[] = [];
  let laneCalls = 0;
  const sql = {
    claimUnlimited: async () => (sent.push('unlimited'), { rows: [], limited: true, walked: null }),
    claimLanes: async (_db: unknown, _params: unknown, turn: RoundTurns) => {
      sent.push('lanes');
      turns.push(turn);
      return lanes(laneCalls++);
    },
    claimLimited: { begin: async () => false, round: async () => ({ rows: [], rateWakeMs: null, more: false, held: false, turnGroup: null, turnLane: null }) },
    complete: async () => ({ results: [], releasing: false }),
    completeAndClaim: async () => ({ results: [], releasing: false, rows: [], limited: true, walked: null }),
    completeAndClaimLanes: async () => ({ results: [], releasing: false, rows: [], limited: false, more: false, turnGroup: null, turnLane: null }),
  };
  const claims = new PostgresClaimPath(
    sql as never,
    async (work) => work({} as never),
    async () => undefined,
    { rateWake: () => {}, claimAgain: () => (signals.again += 1), held: (seen) => signals.held.push(seen) },
  );
  return { claims, sent, signals, turns };
}

describe('issue 39 item 1: the PostgreSQL claim path with jobs in lanes', () => {
  it('claims again for the rest of the batch while a lane gave its share, and asks the workers to claim again when it stops short after its rounds', async () => {
    // Every round: two jobs of group a, and the lanes still give their shares.
    const { claims, sent, signals } = path((call) => ({ rows: [row(2 * call, 'a'), row(2 * call + 1, 'a')], limited: false, more: true, turnGroup: 'a', turnLane: null }));
    const rows = await claims.claim({} as never, params);
    expect(sent).toEqual(['unlimited', 'lanes', 'lanes', 'lanes', 'lanes', 'lanes', 'lanes']);
    expect(rows).toHaveLength(12);
    expect(signals.again).toBe(1);
    expect(signals.held.every((seen) => !seen)).toBe(true);
  });

  it('stops after one round when no lane stopped at its share, asks for nothing more, and takes its next turn after the group it ended with', async () => {
    const { claims, sent, signals, turns } = path((call) => ({ rows: [row(call, call === 0 ? 'b' : 'c')], limited: false, more: false, turnGroup: call === 0 ? 'b' : 'c', turnLane: null }));
    expect(await claims.claim({} as never, params)).toHaveLength(1);
    expect(await claims.claim({} as never, params)).toHaveLength(1);
    // The second claim went straight to the lane claim, from group b on.
    expect(sent).toEqual(['unlimited', 'lanes', 'lanes']);
    expect(turns.map((turn) => turn.after)).toEqual([null, 'b']);
    expect(signals.again).toBe(0);
  });
});
