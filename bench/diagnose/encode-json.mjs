// encodeJson alone, on the enqueue hot path: N encodes of a typical payload of about 1 KiB (an
// order with a customer, addresses, lines, flags and a Date), in CPU µs per encode, best of R
// rounds. Several --module builds (another checkout's dist/lib/store-kit/index.js, say) run in turns within
// one process, so a loaded machine slows them alike.
// Usage: node bench/diagnose/encode-json.mjs [--n 100000] [--rounds 5] [--module dist/lib/store-kit/index.js ...]
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const { values } = parseArgs({
  options: { n: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '5' }, module: { type: 'string', multiple: true, default: ['dist/lib/store-kit/index.js'] } },
});
const modules = await Promise.all(values.module.map(async (path) => ({ path, encodeJson: (await import(pathToFileURL(resolve(path)).href)).encodeJson, rounds: [] })));

const payload = (i) => ({
  orderId: `ord_${i}`,
  placedAt: new Date(Date.UTC(2030, 0, 1, 12, 0, i % 60)),
  customer: { id: 1000 + i, name: 'Ada Lovelace', email: 'ada@example.com', vip: i % 7 === 0, tags: ['early', 'eu', 'newsletter'] },
  shipping: { street: '12 Analytical Engine Lane', city: 'London', postcode: 'NW1 6XE', country: 'GB' },
  billing: { street: '12 Analytical Engine Lane', city: 'London', postcode: 'NW1 6XE', country: 'GB' },
  lines: Array.from({ length: 5 }, (_, n) => ({ sku: `SKU-${n}-${i % 100}`, title: 'Punched card, pack of 100', qty: n + 1, unitCents: 1299, discount: n === 2 ? 0.15 : null })),
  notes: 'Leave at the door; ring twice. Gift wrap the second line, please.',
  flags: { giftWrap: true, express: false, fragile: false },
});
const inputs = Array.from({ length: 1_000 }, (_, i) => payload(i));
const options = { argument: 'payload', maxBytes: 256 * 1024, maxDepth: 64 };
const n = Number(values.n);
let chars = 0;
for (const { encodeJson } of modules) for (let i = 0; i < 20_000; i++) chars = encodeJson(inputs[i % inputs.length], options).length; // warm up
for (let r = 0; r < Number(values.rounds); r++) {
  for (const m of modules) {
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < n; i++) m.encodeJson(inputs[i % inputs.length], options);
    const cpu = process.cpuUsage(cpu0);
    m.rounds.push((cpu.user + cpu.system) / n);
  }
}
console.log(`payload ${chars} characters, ${n} encodes per round`);
for (const m of modules) console.log(`${m.path}: best ${Math.min(...m.rounds).toFixed(2)} CPU µs per encode (rounds ${m.rounds.map((r) => r.toFixed(2)).join(', ')})`);
