import assert from "node:assert/strict";
import {
  anthropicBody,
  chatBody,
  payloads,
  post,
  readSse,
  responsesBody,
  type Sse,
  withSim,
  wordCount,
} from "./test_util.ts";

type Kind = "chat" | "anthropic" | "responses";
const CASES: { kind: Kind; path: string; body: (t: string, x?: Record<string, unknown>) => unknown }[] = [
  { kind: "chat", path: "/v1/chat/completions", body: chatBody },
  { kind: "anthropic", path: "/v1/messages", body: anthropicBody },
  { kind: "responses", path: "/v1/responses", body: responsesBody },
];

/** Read a raw body to the end; report whether it ended with an error. */
async function readRaw(res: Response): Promise<{ text: string; failed: boolean }> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, failed: false };
      text += value;
    }
  } catch {
    return { text, failed: true };
  }
}

function textOf(kind: Kind, events: Sse[]): string {
  const p = payloads(events);
  if (kind === "chat") return p.map((c) => c.choices?.[0]?.delta?.content ?? "").join("");
  if (kind === "anthropic") {
    return p.filter((e) => e.delta?.type === "text_delta").map((e) => e.delta.text).join("");
  }
  return p.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
}

for (const { kind, path, body } of CASES) {
  Deno.test(`faults/${kind}: status:<code> answers JSON error even for streams`, () =>
    withSim(async (sim) => {
      for (const code of [429, 500, 503, 529]) {
        const res = await post(sim, path, body(`x [[sim:fault=status:${code}]]`, { stream: true }));
        assert.equal(res.status, code);
        assert.equal(res.headers.get("content-type"), "application/json");
        assert.equal(res.headers.get("retry-after"), code === 500 ? null : "1");
        const err = await res.json();
        if (kind === "anthropic") {
          assert.equal(err.type, "error");
          const want = {
            429: "rate_limit_error",
            500: "api_error",
            503: "overloaded_error",
            529: "overloaded_error",
          };
          assert.equal(err.error.type, want[code as 429]);
        } else {
          assert.equal(typeof err.error.message, "string");
          assert.equal(err.error.type, code === 429 ? "requests" : "server_error");
        }
      }
    }));

  Deno.test(`faults/${kind}: error_mid sends the in-band error frame and ends`, () =>
    withSim(async (sim) => {
      const res = await post(sim, path, body("x [[sim:fault=error_mid]] [[sim:words=20]]", { stream: true }));
      assert.equal(res.status, 200);
      const events = await readSse(res);
      const p = payloads(events);
      assert.ok(wordCount(textOf(kind, events)) >= 1, "a few deltas first");
      if (kind === "chat") {
        assert.equal(p.at(-1).error.type, "server_error");
        assert.ok(events.every((e) => e.data !== "[DONE]"));
      } else if (kind === "anthropic") {
        assert.equal(events.at(-1)!.event, "error");
        assert.deepEqual(p.at(-1), {
          type: "error",
          error: { type: "overloaded_error", message: "Overloaded" },
        });
      } else {
        assert.equal(p.at(-2).type, "error");
        assert.equal(p.at(-2).code, "server_error");
        assert.equal(p.at(-1).type, "response.failed");
        assert.equal(p.at(-1).response.status, "failed");
        p.forEach((e, i) => assert.equal(e.sequence_number, i));
      }
      const plain = await post(sim, path, body("x [[sim:fault=error_mid]]"));
      assert.equal(plain.status, kind === "anthropic" ? 529 : 500);
      await plain.body?.cancel();
    }));

  Deno.test(`faults/${kind}: cut_mid breaks the body after a few deltas`, () =>
    withSim(async (sim) => {
      const res = await post(sim, path, body("x [[sim:fault=cut_mid]] [[sim:words=20]]", { stream: true }));
      const { text, failed } = await readRaw(res);
      assert.equal(failed, true);
      assert.ok(text.includes("data: "));
      assert.ok(
        !text.includes("[DONE]") && !text.includes("message_stop") && !text.includes("response.completed"),
      );
      const plain = await readRaw(await post(sim, path, body("x [[sim:fault=cut_mid]]")));
      assert.equal(plain.failed, true);
      // Paced: the server may ask for nothing after the last chunk; the break must come anyway.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const paced = await Promise.race([
        readRaw(
          await post(
            sim,
            path,
            body("x [[sim:fault=cut_mid]] [[sim:words=40]] [[sim:interval=2]]", { stream: true }),
          ),
        ),
        new Promise<never>((_, reject) =>
          timer = setTimeout(() => reject(new Error("the cut never came")), 5_000)
        ),
      ]).finally(() => clearTimeout(timer));
      assert.equal(paced.failed, true);
      assert.equal(sim.active, 0);
      assert.equal(sim.aborted, 0);
    }));

  Deno.test(`faults/${kind}: truncated_frame ends inside a data line`, () =>
    withSim(async (sim) => {
      const res = await post(sim, path, body("x [[sim:fault=truncated_frame]]", { stream: true }));
      const { text, failed } = await readRaw(res);
      assert.equal(failed, false);
      assert.ok(!text.endsWith("\n"));
      assert.ok(text.slice(text.lastIndexOf("\n") + 1).startsWith("data: {"));
      const plain = await (await post(sim, path, body("x [[sim:fault=truncated_frame]]"))).text();
      assert.throws(() => JSON.parse(plain));
    }));

  Deno.test(`faults/${kind}: stall keeps the stream open until the client aborts`, () =>
    withSim(async (sim) => {
      const ac = new AbortController();
      const res = await post(sim, path, body("x [[sim:fault=stall]]", { stream: true }), {
        signal: ac.signal,
      });
      const reader = res.body!.getReader();
      await reader.read();
      const pending = reader.read();
      const timeout = new Promise((r) => setTimeout(() => r("timeout"), 150));
      assert.equal(await Promise.race([pending.then(() => "data"), timeout]), "timeout");
      assert.equal(sim.active, 1);
      ac.abort();
      await pending.catch(() => {});
      for (let i = 0; i < 100 && sim.aborted === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(sim.aborted, 1);
      assert.equal(sim.active, 0);
    }));

  Deno.test(`faults/${kind}: wrong_model, no_usage, zero_usage`, () =>
    withSim(async (sim) => {
      const wrong = await (await post(sim, path, body("x [[sim:fault=wrong_model]]"))).json();
      assert.equal(wrong.model, "sim-wrong-model");
      const none = await (await post(sim, path, body("x [[sim:fault=no_usage]]"))).json();
      if (kind === "responses") assert.equal(none.usage, null);
      else assert.equal("usage" in none, false);
      const zero = await (await post(sim, path, body("x [[sim:fault=zero_usage]] [[sim:cached=2]]"))).json();
      const nums = JSON.stringify(zero.usage).match(/\d+/g)!.map(Number);
      assert.ok(nums.length > 0 && nums.every((n) => n === 0));

      const events = await readSse(
        await post(
          sim,
          path,
          body("x [[sim:fault=no_usage]]", {
            stream: true,
            stream_options: kind === "chat" ? { include_usage: true } : undefined,
          }),
        ),
      );
      const p = payloads(events);
      if (kind === "chat") {
        assert.ok(p.every((c) => !("usage" in c)));
        assert.equal(events.at(-1)!.data, "[DONE]");
      } else if (kind === "anthropic") {
        assert.equal(p[0].message.usage, undefined);
        assert.equal(p.at(-2).usage, undefined);
        assert.equal(p.at(-1).type, "message_stop");
      } else assert.equal(p.at(-1).response.usage, null);
      const ws = payloads(
        await readSse(await post(sim, path, body("x [[sim:fault=wrong_model]]", { stream: true }))),
      );
      const model = kind === "chat"
        ? ws[0].model
        : kind === "anthropic"
        ? ws[0].message.model
        : ws[0].response.model;
      assert.equal(model, "sim-wrong-model");
    }));

  Deno.test(`faults/${kind}: non_json`, () =>
    withSim(async (sim) => {
      const res = await post(sim, path, body("x [[sim:fault=non_json]]", { stream: true }));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "application/json");
      assert.equal(await res.text(), "not json");
    }));

  Deno.test(`faults/${kind}: delay and interval`, () =>
    withSim(async (sim) => {
      let t0 = Date.now();
      const res = await post(sim, path, body("x [[sim:delay=120]]"));
      assert.ok(Date.now() - t0 >= 110);
      await res.body?.cancel();
      t0 = Date.now();
      const events = await readSse(
        await post(sim, path, body("x [[sim:interval=15]] [[sim:words=4]]", { stream: true })),
      );
      assert.ok(events.length >= 6);
      assert.ok(Date.now() - t0 >= 15 * (events.length - 1) - 5);
    }));
}

Deno.test("faults: client abort during delay counts as aborted", () =>
  withSim(async (sim) => {
    const ac = new AbortController();
    const req = post(sim, "/v1/chat/completions", chatBody("x [[sim:delay=2000]]"), { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(req);
    for (let i = 0; i < 100 && sim.aborted === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(sim.aborted, 1);
  }));
