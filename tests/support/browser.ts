/**
 * The browser tests' harness: a real headless Chromium from Debian's package (/usr/bin/chromium,
 * installed by .ci/run), driven by puppeteer-core over a pipe. One browser per test file (a file registers one
 * `browserTest` and runs its scenarios as steps); each page records what a test must assert is empty:
 * console errors and uncaught page errors (a CSP violation is a console error), and requests to any host
 * other than loopback, which are aborted before they leave the machine. Screenshots go to `artifacts`
 * (gitignored), one per step, numbered in order. Also the dashboard's sign-in as a person does it (`signIn`),
 * shared with scripts/dashboard_screenshots.ts.
 *
 * Why puppeteer-core and not playwright-core: playwright-core's module initialisation stats
 * /proc/sys/fs/binfmt_misc/WSLInterop (its WSL check), which Deno 2.9 allows only under --allow-all, and
 * reads os.homedir()/os.release() (--allow-sys); puppeteer-core runs under `deno task test`'s permissions.
 */
import assert from "node:assert/strict";
import puppeteer, { type Browser, type BrowserContext, type Page } from "puppeteer-core";
import { underCi } from "./ci.ts";

export const CHROMIUM = "/usr/bin/chromium";
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
/** Schemes that never reach the network (an inline SVG's data: image, the blank start page). */
const LOCAL_SCHEMES = new Set(["data:", "blob:", "about:"]);

function chromiumPresent(): boolean {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
}

/**
 * Registers a test that launches Chromium once, hands it to `fn` and always closes it. Skipped, with a message
 * saying why, only when Chromium is absent outside CI; `artifacts` is emptied first so it holds this run's
 * screenshots only.
 */
export function browserTest(
  name: string,
  artifacts: string,
  fn: (t: Deno.TestContext, browser: Browser) => Promise<void>,
): void {
  const skip = !chromiumPresent() && !underCi();
  if (skip) {
    console.warn(
      `${name}: skipped, ${CHROMIUM} not found (apt-get install chromium; with CI=true this fails)`,
    );
  }
  Deno.test({ name, ignore: skip }, async (t) => {
    if (!chromiumPresent()) {
      throw new Error(`${CHROMIUM} not found: install Debian's chromium package (.ci/run does when missing)`);
    }
    await Deno.remove(artifacts, { recursive: true }).catch((e) => {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    });
    await Deno.mkdir(artifacts, { recursive: true });
    const browser = await launchChromium();
    try {
      await fn(t, browser);
    } finally {
      await browser.close();
    }
  });
}

/** Debian's Chromium, headless, driven over a pipe (no DevTools port open on the machine). */
export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    pipe: true,
    // Chromium refuses to start its sandbox as root (CI runs as root); the pages are the gateway's own,
    // served on loopback, so the tests give up the sandbox rather than require an unprivileged user.
    args: ["--no-sandbox"],
  });
}

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Console messages of type error and uncaught exceptions, in the order seen. */
  errors: string[];
  /** URLs of requests to a host other than loopback (aborted, never sent). */
  offLoopback: string[];
  /** Saves a full-page screenshot named after the step; returns its path. */
  shot(step: string): Promise<string>;
  /** Throws when any console error, page error or off-loopback request was seen. */
  assertClean(): void;
  close(): Promise<void>;
}

/**
 * A page in a fresh context (its own cookies), watched from before its first request; `name` prefixes its
 * screenshots in `artifacts`.
 */
export async function watchedPage(
  browser: Browser,
  artifacts: string,
  name: string,
  opts: { javaScriptEnabled?: boolean } = {},
): Promise<WatchedPage> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1100, height: 760 });
  await page.setJavaScriptEnabled(opts.javaScriptEnabled ?? true);
  const errors: string[] = [];
  const offLoopback: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()} (${m.location().url ?? ""})`);
  });
  page.on("pageerror", (e) => errors.push(`pageerror: ${e instanceof Error ? e.message : String(e)}`));
  await page.setRequestInterception(true);
  page.on("request", (req) => {
    const url = new URL(req.url());
    if (LOCAL_SCHEMES.has(url.protocol) || LOOPBACK.has(url.hostname)) return req.continue();
    offLoopback.push(url.href);
    return req.abort("blockedbyclient");
  });
  let n = 0;
  return {
    page,
    context,
    errors,
    offLoopback,
    async shot(step) {
      const path = `${artifacts}/${name}-${String(++n).padStart(2, "0")}-${step}.png` as const;
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    assertClean() {
      if (errors.length > 0) throw new Error(`${name}: errors in the page:\n${errors.join("\n")}`);
      if (offLoopback.length > 0) {
        throw new Error(`${name}: requests off loopback:\n${offLoopback.join("\n")}`);
      }
    },
    close: () => context.close(),
  };
}

export const SIGN_IN_KEY = 'form[action="/dashboard/login"] input[name="key"]';

/** Clicks (or presses Enter in) something that submits a form, and waits for the page it leads to. */
export async function submit(page: Page, act: () => Promise<unknown>): Promise<void> {
  const [res] = await Promise.all([page.waitForNavigation(), act()]);
  assert.equal(res?.status(), 200, `after the submit: ${res?.url()}`);
}

/** Signs in to the dashboard through its form, as a person would (the key typed, Enter pressed). */
export async function signIn(w: WatchedPage, url: string, key: string): Promise<void> {
  await w.page.goto(`${url}/dashboard`);
  await w.shot("sign-in");
  await w.page.type(SIGN_IN_KEY, key);
  await submit(w.page, () => w.page.keyboard.press("Enter"));
  assert.equal(w.page.url(), `${url}/dashboard`);
  assert.ok(!(await w.page.content()).includes(key), "the key is not in the page");
}
