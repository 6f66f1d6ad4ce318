import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** The machine's Chromium (Debian's `chromium` package); the tests download no browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Headless, as root in CI, and quiet: no updates, sync or background requests of its own. */
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** The fixed viewport, so screenshots come out the same size on every machine. */
export const VIEWPORT = { width: 1280, height: 800 } as const;

export interface Chromium {
  readonly context: BrowserContext;
  readonly page: Page;
  close(): Promise<void>;
}

/** Starts Chromium with a fresh profile directory of its own, removed again by `close`; at {@link VIEWPORT} unless told another size. */
export async function launchChromium(viewport: { readonly width: number; readonly height: number } = VIEWPORT): Promise<Chromium> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`No Chromium at ${CHROMIUM_PATH}: install it (apt-get install -y chromium) or set CHROMIUM_PATH.`);
  const profile = mkdtempSync(join(tmpdir(), 'durable-scheduler-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: ARGS, viewport });
    // Generous for a loaded 2-core machine; every wait is on a page condition, so a pass is never slower for it.
    context.setDefaultTimeout(30_000);
    context.setDefaultNavigationTimeout(30_000);
    const page = context.pages()[0] ?? (await context.newPage());
    return {
      context,
      page,
      async close() {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}
