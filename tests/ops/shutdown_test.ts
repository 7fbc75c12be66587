/**
 * Graceful shutdown (issue 17 item 4; docs/operator-guide.md "Graceful shutdown"): SIGTERM to a real gateway process with
 * streams open and a JSON request waiting on its upstream. While it drains: /readyz 503, new API requests 503
 * service_unavailable with Retry-After in their surface's envelope, admin still served. A stream that finishes
 * within SHUTDOWN_GRACE_MS finishes normally; the others end with one service_unavailable error frame each
 * (relay and translated, three surfaces) and are billed for what ran; the JSON request answers 503 and costs
 * nothing. The process exits 0, and restarted on the same DATA_DIR every request is settled exactly once.
 */
import assert from "node:assert/strict";
import { parseUsd } from "../../src/money/usd.ts";
import { replaySse } from "../../src/protocols/sse_parse.ts";
import { startSimulator } from "../../sim/server.ts";
import { admin, freePort, sleep, spawnGateway, tearDown, waitReady } from "../support/gateway_process.ts";
import { ANTHROPIC_HEADERS, post } from "../support/harness.ts";
import { assertCleanEnding, assertErrorEnding, type Surface } from "../support/sse_client.ts";

const GRACE_MS = 4_000;
/** Streams that outlive the grace by far (20,000 words, one frame of 4 words every 20 ms: ~100 s). */
const LONG = "Долго [[sim:words=20000]] [[sim:interval=20]]";

/** Reads a response body to its end in the background; `ended` tells whether it has. */
function collect(res: Response) {
  const state = { ended: false, text: Promise.resolve("") };
  state.text = res.text().finally(() => state.ended = true);
  return state;
}

Deno.test("SIGTERM: drain with 503s, streams finish within the grace or end with service_unavailable, exit 0, every request settled once", async () => {
  const sim = await startSimulator();
  const dataDir = await Deno.makeTempDir();
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    SHUTDOWN_GRACE_MS: String(GRACE_MS),
    DELTA_UPSTREAM_URL: sim.url,
    DELTA_UPSTREAM_KEY: "k",
  };
  let proc = spawnGateway(port, dataDir, sim.url, env);
  try {
    await waitReady(url);
    assert.equal((await fetch(url + "/readyz").then((r) => r.json())).ready, true);
    const created = await admin(url, "POST", "/admin/keys", { balance_usd: "20.00" });
    const key = created.key as string;

    // Open before the signal: three streams that outlive the grace (Chat relayed, Messages translated from
    // alpha's Chat, Responses relayed from gamma), a JSON request whose upstream answers after a minute, and
    // one short stream (~40 frames, 20 ms apart) that finishes well within the grace.
    const long: [Surface, Response][] = [
      ["chat", await post(url + "/v1/chat/completions", key, longBody("chat", "k3"))],
      ["messages", await post(url + "/v1/messages", key, longBody("messages", "k3"), ANTHROPIC_HEADERS)],
      ["responses", await post(url + "/v1/responses", key, longBody("responses", "gamma-2.5"))],
    ];
    for (const [, res] of long) assert.equal(res.status, 200);
    const longBodies = long.map(([surface, res]) => ({ surface, body: collect(res) }));
    const json = post(url + "/v1/chat/completions", key, {
      model: "k3",
      max_tokens: 100,
      messages: [{ role: "user", content: "Жду [[sim:delay=60000]]" }],
    });
    const short = await post(url + "/v1/chat/completions", key, {
      model: "k3",
      stream: true,
      max_tokens: 100,
      messages: [{ role: "user", content: "Коротко [[sim:words=40]] [[sim:interval=20]]" }],
    });
    assert.equal(short.status, 200);
    const shortBody = collect(short);
    while (sim.requests.length < 5) await sleep(10); // every one of them reached the upstream

    assert.equal(shortBody.ended, false, "the short stream is still open at the signal");
    proc.kill("SIGTERM");
    for (;;) {
      const r = await fetch(url + "/readyz");
      const body = await r.json();
      if (r.status === 503) {
        assert.deepEqual(body.failing, ["draining"]);
        break;
      }
      await sleep(10);
    }

    // Liveness stays 200 (the orchestrator must not restart a draining process).
    assert.equal(await fetch(url + "/healthz").then(async (r) => (await r.body?.cancel(), r.status)), 200);
    // Draining: every new API request is refused in its envelope; the operator is still served.
    const chat = await post(url + "/v1/chat/completions", key, {
      model: "k3",
      messages: [{ role: "user", content: "Новый" }],
    });
    assert.equal(chat.status, 503);
    assert.equal(chat.headers.get("retry-after"), "1");
    const chatBody = await chat.json();
    assert.equal(chatBody.error.code, "service_unavailable");
    assert.equal(chatBody.type, undefined);
    const messages = await post(url + "/v1/messages", key, {
      model: "k3",
      max_tokens: 10,
      messages: [{ role: "user", content: "Новый" }],
    }, ANTHROPIC_HEADERS);
    assert.equal(messages.status, 503);
    assert.equal(messages.headers.get("retry-after"), "1");
    const messagesBody = await messages.json();
    assert.equal(messagesBody.type, "error");
    assert.equal(messagesBody.error.code, "service_unavailable");
    const models = await fetch(url + "/v1/models", { headers: { authorization: `Bearer ${key}` } });
    assert.equal(models.status, 503);
    assert.equal((await models.json()).error.code, "service_unavailable");
    const during = await admin(url, "GET", `/admin/keys/${created.id}`);
    assert.notEqual(during.held_usd, "0.00", "the open requests still hold credit");

    // The short stream finishes normally within the grace.
    assertCleanEnding("chat", await replaySse(await shortBody.text), "short stream");
    // The long ones are cut when the grace runs out: one service_unavailable frame each, in its surface's form.
    for (const { surface, body } of longBodies) {
      const err = assertErrorEnding(surface, await replaySse(await body.text), `long ${surface} stream`);
      assert.equal(err.code, "service_unavailable", surface);
      assert.match(err.message, /\[service_unavailable · req_/, surface);
    }
    // The JSON request still waiting for its upstream: 503, nothing charged.
    const jsonRes = await json;
    assert.equal(jsonRes.status, 503);
    assert.equal(jsonRes.headers.get("retry-after"), "1");
    assert.equal((await jsonRes.json()).error.code, "service_unavailable");

    assert.equal((await proc.status).code, 0);

    // Restarted on the same data: each of the five requests settled exactly once, nothing held.
    proc = spawnGateway(port, dataDir, sim.url, env);
    await waitReady(url);
    const k = await admin(url, "GET", `/admin/keys/${created.id}`);
    const usage = await (await fetch(url + "/v1/usage/requests?limit=100", {
      headers: { authorization: `Bearer ${key}` },
    })).json();
    const rows = usage.data as { request_id: string; status: string; stream: boolean; charged_usd: string }[];
    assert.equal(rows.length, 5, JSON.stringify(rows));
    assert.equal(new Set(rows.map((r) => r.request_id)).size, 5);
    const byStatus = (s: string) => rows.filter((r) => r.status === s);
    assert.equal(byStatus("ok").length, 1, "the short stream");
    assert.equal(byStatus("error").length, 4, "three cut streams and the JSON request");
    for (const r of byStatus("error")) {
      if (r.stream) assert.ok(parseUsd(r.charged_usd) > 0n, "a cut stream is billed for what ran");
      else assert.equal(parseUsd(r.charged_usd), 0n, "the cut JSON request is free");
    }
    assert.equal(k.held_usd, "0.00");
    const spent = rows.reduce((n, r) => n + parseUsd(r.charged_usd), 0n);
    assert.equal(parseUsd(k.spent_usd), spent);
    // The ledger identity: credited = available + held + spent, exactly.
    assert.equal(
      parseUsd(k.credited_usd),
      parseUsd(k.balance_usd) + parseUsd(k.held_usd) + parseUsd(k.spent_usd),
    );
    assert.equal(k.credited_usd, "20.00");
  } finally {
    await tearDown(proc, sim, dataDir);
  }
});

Deno.test("a second signal ends the grace at once: the open stream is cut, settled, and the process exits 0", async () => {
  const sim = await startSimulator();
  const dataDir = await Deno.makeTempDir();
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = spawnGateway(port, dataDir, sim.url, { SHUTDOWN_GRACE_MS: "3600000" });
  try {
    await waitReady(url);
    const created = await admin(url, "POST", "/admin/keys", { balance_usd: "5.00" });
    const res = await post(url + "/v1/chat/completions", created.key, longBody("chat", "k3"));
    assert.equal(res.status, 200);
    const body = collect(res);
    proc.kill("SIGTERM");
    while ((await fetch(url + "/readyz").then(async (r) => (await r.body?.cancel(), r.status))) !== 503) {
      await sleep(10);
    }
    assert.equal(body.ended, false, "an hour's grace: still streaming");
    proc.kill("SIGINT");
    const err = assertErrorEnding("chat", await replaySse(await body.text), "second signal");
    assert.equal(err.code, "service_unavailable");
    assert.equal((await proc.status).code, 0);
  } finally {
    await tearDown(proc, sim, dataDir);
  }
});

function longBody(surface: Surface, model: string) {
  if (surface === "responses") return { model, stream: true, max_output_tokens: 20_000, input: LONG };
  return { model, stream: true, max_tokens: 20_000, messages: [{ role: "user", content: LONG }] };
}
