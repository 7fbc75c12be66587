import assert from "node:assert/strict";
import { MAX_RECORDED, startSimulator } from "./server.ts";
import {
  anthropicBody,
  chatBody,
  payloads,
  post,
  readSse,
  responsesBody,
  waitFor,
  withSim,
  wordCount,
} from "./test_util.ts";

Deno.test("server: records requests; GET and DELETE /__sim/requests", () =>
  withSim(async (sim) => {
    await (await post(sim, "/v1/messages", anthropicBody("раз"))).body?.cancel();
    await (await post(sim, "/v1/chat/completions", "{broken")).body?.cancel();
    assert.equal(sim.requests.length, 2);
    assert.equal(sim.requests[0]!.path, "/v1/messages");
    assert.equal(sim.requests[0]!.headers["x-api-key"], "sk-ant-test");
    assert.equal((sim.requests[0]!.body as any).messages[0].content, "раз");
    assert.equal(sim.requests[1]!.body, "{broken");
    const listed = await (await fetch(sim.url + "/__sim/requests")).json();
    assert.equal(listed.length, 2);
    assert.equal((await fetch(sim.url + "/__sim/requests", { method: "DELETE" })).status, 204);
    assert.equal(sim.requests.length, 0);
    const missing = await fetch(sim.url + "/v1/unknown", { method: "POST" });
    assert.equal(missing.status, 404);
    await missing.body?.cancel();
  }));

Deno.test("server: keeps only the last 1000 requests", () =>
  withSim(async (sim) => {
    for (let i = 0; i < MAX_RECORDED + 5; i++) {
      await (await post(sim, "/v1/responses", responsesBody(`n${i}`))).body?.cancel();
    }
    assert.equal(sim.requests.length, MAX_RECORDED);
    assert.equal((sim.requests[0]!.body as any).input, "n5");
  }));

Deno.test("server: client abort mid-stream increments aborted and releases active", () =>
  withSim(async (sim) => {
    const ac = new AbortController();
    const res = await post(
      sim,
      "/v1/messages",
      anthropicBody("x [[sim:words=1000]] [[sim:interval=5]]", { stream: true }),
      {
        signal: ac.signal,
      },
    );
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    assert.equal(sim.active, 1);
    ac.abort();
    await reader.read().catch(() => {});
    await waitFor(() => sim.aborted === 1);
    assert.equal(sim.active, 0);
    const done = await readSse(await post(sim, "/v1/messages", anthropicBody("x", { stream: true })));
    assert.equal(payloads(done).at(-1).type, "message_stop");
    assert.equal(sim.aborted, 1, "a completed stream is not counted");
  }));

Deno.test("server: 100k-word stream is produced on demand and counted exactly", () =>
  withSim(async (sim) => {
    const res = await post(
      sim,
      "/v1/chat/completions",
      chatBody("много [[sim:words=100000]]", { stream: true, stream_options: { include_usage: true } }),
    );
    const chunks = payloads(await readSse(res));
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    assert.equal(wordCount(text), 100_000);
    assert.equal(chunks.at(-1).usage.completion_tokens, 100_000);
    assert.equal(sim.active, 0);
  }));

Deno.test("server: slow reader is not flooded (pull-based body)", () =>
  withSim(async (sim) => {
    const res = await post(sim, "/v1/responses", responsesBody("x [[sim:words=100000]]", { stream: true }));
    const reader = res.body!.getReader();
    await reader.read();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(sim.active, 1, "still open: only a bounded batch was produced");
    await reader.cancel();
    await waitFor(() => sim.active === 0);
  }));

Deno.test("server: close() ends stalled streams", async () => {
  const sim = await startSimulator();
  const res = await post(sim, "/v1/chat/completions", chatBody("x [[sim:fault=stall]]", { stream: true }));
  const reader = res.body!.getReader();
  await reader.read();
  assert.equal(sim.active, 1);
  await sim.close();
  await reader.read().catch(() => {});
  assert.equal(sim.active, 0);
});
