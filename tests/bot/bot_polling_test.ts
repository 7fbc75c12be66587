/**
 * The key shop bot in long-polling mode (TELEGRAM_WEBHOOK_SECRET unset): the webhook is deleted,
 * updates come from getUpdates with confirmed offsets, and the polling stops with the gateway.
 */
import assert from "node:assert/strict";
import { startBotGateway } from "../support/bot_harness.ts";

Deno.test("bot polling: deleteWebhook, then updates from getUpdates answered; the gateway's shutdown stops it", async () => {
  const gw = await startBotGateway({}, { polling: true });
  let closed = false;
  try {
    assert.equal(gw.t.gw.app.telegramWebhook, undefined, "no webhook route in polling mode");
    await gw.fake.waitFor("deleteWebhook");
    const poll = await gw.fake.waitFor("getUpdates");
    assert.deepEqual(poll.params.allowed_updates, ["message", "callback_query", "pre_checkout_query"]);
    assert.equal(poll.params.timeout, 25);
    const chat = gw.chat(20_001);
    const start = chat.message("/start");
    const mark = gw.fake.calls.length;
    await chat.deliver(start);
    const hello = await gw.fake.waitFor("sendMessage", (c) => c.params.chat_id === chat.id, { from: mark });
    assert.match(hello.params.text, /^Здравствуйте!/);
    // The next poll confirms the update: its offset is past it.
    const next = await gw.fake.waitFor("getUpdates", (c) => c.params.offset === start.update_id + 1, {
      from: mark,
    });
    assert.ok(next);
    // The webhook route does not exist for a polling bot.
    const res = await fetch(`${gw.t.url}/telegram/${"0".repeat(32)}`, { method: "POST", body: "{}" });
    assert.equal(res.status, 404);
    await res.body?.cancel();
    await gw.t.close();
    closed = true;
    // Shutdown: grammY's stop confirms the last offset with one getUpdates of limit 1.
    const last = gw.fake.calls[gw.fake.calls.length - 1]!;
    assert.deepEqual([last.method, last.params.offset, last.params.limit], [
      "getUpdates",
      start.update_id + 1,
      1,
    ]);
  } finally {
    if (!closed) await gw.t.close();
    await gw.fake.close();
  }
});
