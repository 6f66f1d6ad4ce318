// An open-loop producer: the offered rate is credited on wall-clock time, so a slow enqueue does not
// lower what is offered. Every tick it enqueues what the credit allows and the previous calls have
// not yet sent, in addMany chunks of at most CHUNK; when an addMany falls behind, the credit piles
// up and the next calls catch up in larger chunks. One addMany is in flight at a time: on 2 cores,
// into an empty table, one in flight sustained 1,200 jobs/s offered exactly and 18,000–35,000
// jobs/s unbounded for ours, graphile-worker and pg-boss (README, "Pressure"), and one caller keeps
// the jobs' keys in commit order.
import { now, payload, sleep } from '../peers/cell.mjs';

const TICK_MS = 25;
const CHUNK = 500;

export class RateProducer {
  enqueued = 0;
  error = null;
  #rate = 0;
  #banked = 0; // credit earned at earlier rates
  #since = now();
  #running = true;
  #loop;

  /** `onCommitted(k0, n, epochMs)`: jobs k0 … k0 + n − 1 are committed (the addMany returned). */
  constructor(producer, onCommitted) {
    this.producer = producer;
    this.onCommitted = onCommitted;
    this.#loop = this.#run().catch((error) => {
      this.error = error;
    });
  }

  /**
   * Jobs/s from `at` (epoch ms, not in the future) on; the credit earned before is kept. A phase
   * change passes its scheduled time, so the moments the runner spends sampling are not miscounted.
   */
  setRate(rate, at = now()) {
    this.#banked = this.#credit(at);
    this.#since = at;
    this.#rate = rate;
  }

  #credit(at = now()) {
    return this.#banked + (this.#rate * (at - this.#since)) / 1_000;
  }

  async #run() {
    while (this.#running) {
      const due = Math.floor(this.#credit()) - this.enqueued;
      if (due <= 0) {
        await sleep(TICK_MS);
        continue;
      }
      const k0 = this.enqueued;
      const n = Math.min(due, CHUNK);
      await this.producer.addMany(Array.from({ length: n }, (_, i) => payload(k0 + i)));
      this.enqueued += n;
      this.onCommitted(k0, n, now());
    }
  }

  /** Stops offering; resolves once the addMany in flight has returned. Throws what stopped it early. */
  async stop() {
    this.#running = false;
    await this.#loop;
    if (this.error) throw this.error;
  }
}
