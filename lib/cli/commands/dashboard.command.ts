import { Option, type Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { withConnection, type CliContext } from '../cli-context.js';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError(`--port must be a whole number from 0 to 65535, got "${value}".`);
  return n;
}

/** Resolves at the first SIGINT or SIGTERM, so the command closes its server and connection. */
function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

export function registerDashboard(program: Command, ctx: CliContext): void {
  withConnection(program.command('dashboard').description('serve the operator dashboard in a browser, without an app; stop it with Ctrl-C'))
    .addOption(new Option('--port <port>', 'the port to listen on').default(8080).argParser(port))
    .option('--host <address>', 'the interface to bind; any but 127.0.0.1 needs --token', '127.0.0.1')
    .option('--token <secret>', 'a secret of 16 or more characters that every request must carry (default: DASHBOARD_TOKEN)')
    .option('--read-only', 'refuse every action: cancel, replay, pause, resume and trigger')
    .option('--reveal-payloads', 'let a read-only dashboard reveal job payloads')
    .action(async (options: { conn?: string; table?: string; port: number; host: string; token?: string; readOnly?: boolean; revealPayloads?: boolean }) => {
      const token = options.token ?? (ctx.env.DASHBOARD_TOKEN || undefined);
      await ctx.withStore(options, async ({ store, target }) => {
        const { startDashboardServer } = await import('../../dashboard/http/dashboard-server.js');
        const server = await startDashboardServer({
          store,
          host: options.host,
          port: options.port,
          token,
          actor: ctx.actor.replace(/^cli:/, 'dashboard:'),
          readOnly: options.readOnly ?? false,
          revealPayloadsWhenReadOnly: options.revealPayloads ?? false,
          logError: (line) => ctx.out(line),
        });
        ctx.out(`Dashboard at ${server.url} for ${target}${options.readOnly ? ', read-only' : ''}${token ? '; open it once with ?token=<token>' : ''}. Stop it with Ctrl-C.`);
        await stopSignal();
        await server.close();
      });
    });
}
