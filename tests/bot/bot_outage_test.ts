/**
 * Telegram unreachable never affects the gateway's API: the gateway starts without waiting for
 * the Bot API, serves API requests while every Bot API call hangs or is refused, and shuts down promptly.
 */
import assert from "node:assert/strict";
import { startFakeTelegram } from "../support/fake_telegram.ts";
import { BOT_TOKEN } from "../support/fake_telegram.ts";
import { post, startTestGateway } from "../support/harness.ts";
import { PUBLIC_BASE_URL, WEBHOOK_SECRET } from "../support/bot_harness.ts";

/** A port nothing listens on: every connection refused. */
function closedPort(): string {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return `http://127.0.0.1:${port}`;
}

for (const [name, polling] of [["webhook", false], ["polling", true]] as const) {
  Deno.test(`bot outage (${name}): a Bot API that never answers — the API answers, shutdown is prompt`, async () => {
    const fake = await startFakeTelegram({ hang: true });
    const t = await startTestGateway({
      TELEGRAM_BOT_TOKEN: BOT_TOKEN,
      TELEGRAM_API_ROOT: fake.url,
      PUBLIC_BASE_URL,
      BOT_ALERT_CHECK_MS: "50",
      ...(polling ? {} : { TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET }),
    });
    try {
      const k = await t.newKey("1.00");
      const res = await post(t.url + "/v1/chat/completions", k.key, {
        model: "k3",
        max_tokens: 20,
        messages: [{ role: "user", content: "Привет [[sim:words=3]]" }],
      });
      assert.equal(res.status, 200);
      assert.equal((await res.json()).object, "chat.completion");
      const health = await fetch(t.url + "/readyz");
      assert.equal(health.status, 200);
      await health.body?.cancel();
    } finally {
      await t.close(); // the test's sanitizers fail it if a Bot API call or timer outlives the gateway
      await fake.close();
    }
  });
}

Deno.test("bot outage: a refused Bot API (nothing listening) — the API answers, the bot retries in the background", async () => {
  const lines: string[] = [];
  const t = await startTestGateway({
    TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    TELEGRAM_API_ROOT: closedPort(),
    PUBLIC_BASE_URL,
    TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET,
    LOG_LEVEL: "warn",
  }, { logSink: (l) => lines.push(l) });
  try {
    const k = await t.newKey("1.00");
    const res = await post(t.url + "/v1/chat/completions", k.key, {
      model: "k3",
      max_tokens: 20,
      messages: [{ role: "user", content: "Привет [[sim:words=3]]" }],
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    // The bot's first call fails in the background, on its own time: wait for it (bounded), not on the answer.
    const logged = () => lines.some((l) => JSON.parse(l).msg === "telegram: call failed");
    for (const until = Date.now() + 5_000; !logged() && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    await t.close();
  }
  const failed = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "telegram: call failed");
  assert.ok(failed.length > 0, "the failures are logged");
  assert.equal(failed[0].error, "Network request for 'getMe' failed!");
  assert.ok(!lines.some((l) => l.includes(BOT_TOKEN.split(":")[1]!)), "the token in no log line");
});
