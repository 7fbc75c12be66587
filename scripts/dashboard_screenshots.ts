/**
 * The dashboard screenshots of docs/operator-guide.md: docs/dashboard/overview.png and docs/dashboard/usage.png.
 * A test gateway and simulator (tests/support/harness.ts), one key with 30 days of usage on four models of three
 * families, each request made with the gateway's clock (app.now) set back to its day, so its usage row and the
 * hourly rollup are dated then; then Debian's Chromium (tests/support/browser.ts) signs in and photographs the overview
 * and the 30-day spend chart. The same seed gives the same picture apart from the dates. The overview's spend
 * this hour and today count settlements by the caps' own clock, the real one: there the whole history is
 * this hour's.
 *   npx -y deno@2 run -A --unstable-kv --unstable-no-legacy-abort scripts/dashboard_screenshots.ts
 */
import { launchChromium, signIn, watchedPage } from "../tests/support/browser.ts";
import { post, withGateway } from "../tests/support/harness.ts";

const OUT = "docs/dashboard";
const DAY_MS = 86_400_000;
/** Models and how many requests each makes on a busy day. */
const MIX: readonly [string, number][] = [["k3", 6], ["beta-sonnet-5", 3], ["beta-haiku-4-5", 4], [
  "theta3.7-plus",
  2,
]];

/** A small deterministic generator (mulberry32), so reruns draw the same days. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

await withGateway(async (gw) => {
  const k = await gw.newKey("25.00");
  const random = seeded(19);
  const today = Date.now() - (Date.now() % DAY_MS);
  for (let d = 29; d >= 0; d--) {
    const busy = 0.3 + 0.7 * random();
    for (const [model, most] of MIX) {
      for (let i = Math.round(most * busy * random()); i > 0; i--) {
        const at = Math.min(today - d * DAY_MS + Math.floor(random() * DAY_MS), Date.now());
        gw.gw.app.now = () => at;
        const path = model.startsWith("theta") ? "/theta/v1/chat/completions" : "/v1/chat/completions";
        const words = 50 + Math.floor(random() * 400);
        const res = await post(gw.url + path, k.key, {
          model,
          messages: [{
            role: "user",
            content: `${"Расскажи подробнее. ".repeat(words)}[[sim:words=${words}]]`,
          }],
        });
        if (res.status !== 200) throw new Error(`${model}: ${res.status} ${await res.text()}`);
        await res.body?.cancel();
      }
    }
  }
  gw.gw.app.now = () => Date.now();
  // Caps and theta limits, so the overview shows them (set after the history, which they would have refused).
  await gw.admin("POST", `/admin/keys/${k.id}/caps`, { hourly_spend_usd: "2.00", daily_spend_usd: "10.00" });
  await gw.admin("POST", `/admin/keys/${k.id}/theta`, { hourly_requests: 20, daily_requests: 100 });

  await Deno.mkdir(OUT, { recursive: true });
  const browser = await launchChromium();
  try {
    const w = await watchedPage(browser, await Deno.makeTempDir(), "docs");
    await signIn(w, gw.url, k.key);
    await w.page.screenshot({ path: `${OUT}/overview.png`, fullPage: true });
    await w.page.goto(`${gw.url}/dashboard/usage?range=days`);
    const card = await w.page.$('.card:has(svg[data-testid="usage-chart"])');
    if (!card) throw new Error("no usage chart on /dashboard/usage");
    await card.screenshot({ path: `${OUT}/usage.png` });
    w.assertClean();
  } finally {
    await browser.close();
  }
  console.log(`${OUT}/overview.png, ${OUT}/usage.png`);
});
