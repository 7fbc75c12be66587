/** Flow control of the stream pipeline: backpressure to the upstream, heartbeats, and client disconnect. */
import assert from "node:assert/strict";
import { post, startTestGateway } from "../support/harness.ts";
import { countingUpstream } from "../support/upstream_stubs.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("a slow reader holds back the upstream: per-stream buffering stays bounded", async () => {
  const up = countingUpstream(500_000); // ≈ 60 MB if produced without backpressure
  const t = await startTestGateway({ ALPHA_UPSTREAM_URL: up.url });
  try {
    const k = await t.newKey("100.00");
    const res = await post(t.url + "/v1/chat/completions", k.key, {
      model: "k3",
      stream: true,
      messages: [{ role: "user", content: "долгий ответ" }],
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    // A slow reader: one read every 250 ms for three seconds, whatever size the transport hands over.
    let read = 0;
    let readAt2s = 0;
    let producedAt2s = 0;
    const start = Date.now();
    while (Date.now() - start < 3_000) {
      const { value } = await reader.read();
      read += value?.byteLength ?? 0;
      if (producedAt2s === 0 && Date.now() - start >= 2_000) {
        producedAt2s = up.produced;
        readAt2s = read;
      }
      await sleep(250);
    }
    const producedAt3s = up.produced;
    // Bounded by socket buffers and one frame per pull, far below the 60 MB the upstream could send.
    assert.ok(producedAt3s < 16_000_000, `upstream produced ${producedAt3s} bytes`);
    assert.ok(
      producedAt3s - producedAt2s < 1_000_000 + (read - readAt2s),
      `upstream kept producing: ${producedAt2s} → ${producedAt3s} while the client read ${read - readAt2s}`,
    );
    await reader.cancel();
    for (let i = 0; i < 50 && !up.cancelled; i++) await sleep(20);
    assert.ok(up.cancelled, "client cancel reached the upstream");
  } finally {
    await t.close();
    await up.close();
  }
});

Deno.test("client disconnect aborts the upstream at once and still settles", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("10.00");
    const before = t.sim.aborted;
    const res = await post(t.url + "/v1/chat/completions", k.key, {
      model: "k3",
      stream: true,
      messages: [{ role: "user", content: "Привет [[sim:words=5000]] [[sim:interval=20]]" }],
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    for (let i = 0; i < 100 && t.sim.aborted === before; i++) await sleep(20);
    assert.equal(t.sim.aborted, before + 1, "the simulator saw its stream aborted");
    let view: any;
    for (let i = 0; i < 50; i++) {
      view = (await t.admin("GET", `/admin/keys/${k.id}`)).json;
      if (view.held_usd === "0.00") break;
      await sleep(20);
    }
    assert.equal(view.held_usd, "0.00");
    assert.notEqual(view.spent_usd, "0.00", "delivered output is charged by estimate");
  } finally {
    await t.close();
  }
});

Deno.test("a quiet stream gets SSE comment heartbeats and still ends cleanly", async () => {
  const t = await startTestGateway({ STREAM_HEARTBEAT_MS: "50", STREAM_IDLE_TIMEOUT_MS: "5000" });
  try {
    const k = await t.newKey("10.00");
    const res = await post(t.url + "/v1/chat/completions", k.key, {
      model: "k3",
      stream: true,
      messages: [{ role: "user", content: "Привет [[sim:words=3]] [[sim:interval=300]]" }],
    });
    const raw = await res.text();
    assert.match(raw, /^: keep-alive$/m);
    assert.ok(raw.trimEnd().endsWith("data: [DONE]"), raw);
    assert.ok(!raw.includes('"error"'), raw);
  } finally {
    await t.close();
  }
});

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

/** A JSON request whose upstream thinks for 3 s, with the client's abort; settles to the fetch's error. */
function slowRequest(t: TestGateway, key: string) {
  const client = new AbortController();
  const pending = fetch(t.url + "/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: "k3", messages: [{ role: "user", content: "Привет [[sim:delay=3000]]" }] }),
    signal: client.signal,
  }).catch((e) => e);
  return { client, pending };
}

/** The hold released well before the upstream's 3 s, nothing spent, the usage row `cancelled`. */
async function assertReleasedCancelled(t: TestGateway, keyId: string) {
  let after: any;
  for (let i = 0; i < 50; i++) {
    after = (await t.admin("GET", `/admin/keys/${keyId}`)).json;
    if (after.held_usd === "0.00") break;
    await sleep(20);
  }
  assert.equal(after.held_usd, "0.00", "released well before the upstream's 3 s delay");
  assert.equal(after.spent_usd, "0.00");
  await t.gw.app.accounts.committer.flush();
  const rows = (await t.gw.app.store.listUsage(keyId, { limit: 5 })).rows;
  assert.equal(rows[0]?.status, "cancelled");
}

Deno.test("a client that leaves before the answer starts aborts the upstream and pays nothing", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("10.00");
    const { client, pending } = slowRequest(t, k.key);
    await sleep(200);
    const view = (await t.admin("GET", `/admin/keys/${k.id}`)).json;
    assert.notEqual(view.held_usd, "0.00", "the hold is placed while the upstream thinks");
    client.abort();
    assert.equal((await pending).name, "AbortError");
    await assertReleasedCancelled(t, k.id);
  } finally {
    await t.close();
  }
});
Deno.test("a client that leaves in the request's first milliseconds is noticed once watched (ClientWatch): released, cancelled", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("10.00");
    const { client, pending } = slowRequest(t, k.key);
    // Gone as soon as the request holds its slot, before the client's signal is first read (20 ms in).
    for (let i = 0; i < 2000 && t.gw.app.slots.inflight === 0; i++) await sleep(1);
    assert.equal(t.gw.app.slots.inflight, 1, "the request reached its hold");
    client.abort();
    assert.equal((await pending).name, "AbortError");
    await assertReleasedCancelled(t, k.id);
  } finally {
    await t.close();
  }
});
