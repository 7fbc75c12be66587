/**
 * The browser harness itself (tests/support/browser.ts) against planted faults on a trivial loopback page: a console
 * error, an uncaught exception and an off-loopback image are each recorded, the image is aborted, and a clean
 * page passes; with JavaScript off nothing runs. The dashboard's browser tests rely on these records.
 */
import assert from "node:assert/strict";
import type { HTTPRequest } from "puppeteer-core";
import { browserTest, watchedPage } from "../support/browser.ts";

const ARTIFACTS = "test-artifacts/browser-harness";
const OFF_LOOPBACK = "http://gateway-harness.invalid/pixel.png";

/** Without an icon Chromium asks for /favicon.ico, and its 404 is a console error like any other. */
const ICON = `<link rel="icon" href="data:,">`;
const PAGES: Record<string, [string, string]> = {
  "/clean": [
    "text/html",
    `<!doctype html><title>ok</title>${ICON}<p id="p">чисто</p><script src="/clean.js"></script>`,
  ],
  "/clean.js": ["text/javascript", `document.getElementById("p").dataset.ran = "yes";`],
  "/faulty": [
    "text/html",
    `<!doctype html><title>bad</title>${ICON}<p id="p">плохо</p><img src="${OFF_LOOPBACK}" alt="">` +
    `<script src="/faulty.js"></script>`,
  ],
  "/faulty.js": [
    "text/javascript",
    `console.error("planted console error"); throw new Error("planted throw");`,
  ],
};

browserTest(
  "browser harness records console errors, page errors and off-loopback requests",
  ARTIFACTS,
  async (t, browser) => {
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
      const hit = PAGES[new URL(req.url).pathname];
      return hit
        ? new Response(hit[1], { headers: { "content-type": `${hit[0]}; charset=utf-8` } })
        : new Response("", { status: 404 });
    });
    const base = `http://127.0.0.1:${server.addr.port}`;
    try {
      await t.step("a clean page passes", async () => {
        const w = await watchedPage(browser, ARTIFACTS, "clean");
        await w.page.goto(`${base}/clean`);
        await w.page.waitForSelector("#p[data-ran=yes]");
        const shot = await w.shot("loaded");
        assert.ok((await Deno.stat(shot)).size > 0);
        w.assertClean();
        await w.close();
      });

      await t.step("planted faults are recorded and the off-loopback request aborted", async () => {
        const w = await watchedPage(browser, ARTIFACTS, "faulty");
        const failed = new Promise<HTTPRequest>((ok) =>
          w.page.on("requestfailed", (r) => r.url() === OFF_LOOPBACK && ok(r))
        );
        const thrown = new Promise((ok) => w.page.once("pageerror", ok));
        await w.page.goto(`${base}/faulty`);
        assert.match((await failed).failure()?.errorText ?? "", /^net::ERR_BLOCKED_BY_CLIENT/);
        await thrown;
        assert.deepEqual(w.offLoopback, [OFF_LOOPBACK]);
        assert.ok(w.errors.some((e) => e.startsWith("console: planted console error")), w.errors.join("\n"));
        assert.ok(w.errors.includes("pageerror: planted throw"), w.errors.join("\n"));
        assert.throws(() => w.assertClean(), /errors in the page/);
        await w.close();
      });

      await t.step("with JavaScript off no script runs", async () => {
        const w = await watchedPage(browser, ARTIFACTS, "nojs", { javaScriptEnabled: false });
        await w.page.goto(`${base}/clean`);
        assert.deepEqual(await w.page.$eval("#p", (p) => [p.textContent, p.getAttribute("data-ran")]), [
          "чисто",
          null,
        ]);
        w.assertClean();
        await w.close();
      });
    } finally {
      await server.shutdown();
    }
  },
);
