import { connect } from 'node:net';

/**
 * Resolves once `port` on 127.0.0.1 accepts a connection, trying every 20 ms; rejects if the
 * process behind it exits first, or after 15 s (a bound that only names the failure).
 */
export async function listening(port: number, exited: Promise<unknown>, log: () => string = () => ''): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (gone) throw new Error(`the app exited before listening:\n${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port} after 15 s:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
