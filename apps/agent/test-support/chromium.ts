import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

/** Debian's Chromium (`apt-get install -y chromium`; `.ci/run` installs it when missing). */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/** Headless, sandbox-free (CI runs as root), and quiet: no network of its own, no first-run work. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function chromiumInstalled(): boolean {
  return existsSync(CHROMIUM_PATH);
}

export interface OpenedPage {
  page: Page;
  /** Every URL the page asked for that is not the file itself or inline data (must stay empty: no network). */
  outsideRequests: string[];
  close(): Promise<void>;
}

/**
 * Opens a local HTML file in headless Chromium with a fresh profile folder. Requests to anything but
 * `file:` and `data:` URLs are recorded and refused, so a page that needs the network shows it.
 */
export async function openInChromium(
  file: string,
  viewport = { width: 1280, height: 1100 },
): Promise<OpenedPage> {
  const profile = mkdtempSync(join(tmpdir(), "unforget-chromium-"));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport,
    deviceScaleFactor: 1,
  });
  const outsideRequests: string[] = [];
  await context.route("**/*", async (route) => {
    const url = route.request().url();
    if (url.startsWith("file:") || url.startsWith("data:")) return route.continue();
    outsideRequests.push(url);
    return route.abort();
  });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`file://${file}`);
  return {
    page,
    outsideRequests,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
