// PROFILE=file.cpuprofile: a CPU profile of one stretch of a diagnostic (open it in Chrome DevTools).
// `const stop = await startProfile()` before the stretch, `await stop()` after; no-ops without PROFILE.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

export async function startProfile() {
  if (!process.env.PROFILE) return async () => {};
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(process.env.PROFILE, JSON.stringify(profile));
    session.disconnect();
  };
}
