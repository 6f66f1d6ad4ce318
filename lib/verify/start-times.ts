/** One rate key's recent start times, in time order: a start logged after one stamped later slots in behind it. */
export class StartTimes {
  private times: number[] = [];
  private head = 0;

  add(t: number): void {
    const { times } = this;
    let i = times.length;
    while (i > this.head && times[i - 1]! > t) i -= 1;
    times.splice(i, 0, t);
  }

  forgetBefore(t: number): void {
    while (this.head < this.times.length && this.times[this.head]! < t) this.head += 1;
    if (this.head > 1_024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }

  /** The start times in `[from, to)`. */
  from(from: number, to: number): number[] {
    const out: number[] = [];
    for (let i = this.firstAfter(from - 1); i < this.times.length && this.times[i]! < to; i += 1) out.push(this.times[i]!);
    return out;
  }

  /** Starts in `(from, to]`. */
  countIn(from: number, to: number): number {
    return this.firstAfter(to) - this.firstAfter(from);
  }

  private firstAfter(t: number): number {
    let lo = this.head;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.times[mid]! <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
