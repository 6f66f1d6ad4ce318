import DefaultSequencer from '@jest/test-sequencer';

/**
 * The simulator's suites first, each into a fresh worker, then the rest in jest's own order. They
 * are CPU-bound and allocate fast, and a jest worker's heap grows with every file it has loaded
 * (each keeps its ESM module graph until the worker is replaced): run late, in a worker near its
 * memory limit, they ran 4 to 26 times slower than alone as garbage collection took over (replay:
 * 15 s alone, 61 s and 399 s in two CI runs).
 */
export default class SimulatorFirstSequencer extends DefaultSequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const simulator = (test) => test.path.includes('/test/simulator/');
    return [...sorted.filter(simulator), ...sorted.filter((test) => !simulator(test))];
  }
}
