/** A source of uniform numbers in [0, 1). Injected so retries and simulations can be replayed. */
export interface RandomSource {
  next(): number;
}

const MASK64 = (1n << 64n) - 1n;

/** SplitMix64: spreads one 64-bit seed over the generator's state words. */
function splitMix64(state: { x: bigint }): bigint {
  state.x = (state.x + 0x9e3779b97f4a7c15n) & MASK64;
  let z = state.x;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return z ^ (z >> 31n);
}

/**
 * A seeded xoshiro128** generator. One 64-bit seed fixes the whole sequence, so a retry schedule or
 * a simulator run replays exactly from its seed.
 */
export class SeededRandom implements RandomSource {
  private readonly s = new Uint32Array(4);

  constructor(seed: bigint | number) {
    const state = { x: BigInt.asUintN(64, BigInt(seed)) };
    const a = splitMix64(state);
    const b = splitMix64(state);
    this.s[0] = Number(a & 0xffffffffn);
    this.s[1] = Number(a >> 32n);
    this.s[2] = Number(b & 0xffffffffn);
    this.s[3] = Number(b >> 32n);
    if ((this.s[0] | this.s[1] | this.s[2] | this.s[3]) === 0) this.s[0] = 1;
  }

  /** The next 32-bit unsigned integer. */
  nextUint32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  next(): number {
    return this.nextUint32() / 0x1_0000_0000;
  }

  /** A uniform integer in [0, bound). */
  nextInt(bound: number): number {
    return Math.floor(this.next() * bound);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
