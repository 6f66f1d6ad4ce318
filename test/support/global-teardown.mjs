export default async function globalTeardown() {
  const servers = globalThis.__EMBEDDED_POSTGRES__ ?? [];
  await Promise.all(servers.map((server) => server.stop()));
}
