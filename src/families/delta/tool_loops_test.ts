/**
 * Gamma/eta tool-loop bookkeeping (tool_loops.ts) on an in-memory Deno KV store with an injected clock: opening,
 * continuing, closing, the limit and its Retry-After, expiry, failed answers, merging, other keys, and a next
 * request that arrives before the previous answer's write landed.
 */
import assert from "node:assert/strict";
import { GatewayError } from "../../errors/gateway_error.ts";
import type { IRMessage, IRRequest } from "../../ir/request.ts";
import { KvStore } from "../../store/kv_store.ts";
import type { Store } from "../../store/store.ts";
import { keyRecord } from "../../store/testing/test_fixtures.ts";
import type { AnswerSummary, RequestSession } from "../policy.ts";
import { Logger } from "../../util/log.ts";
import {
  LOOP_SET,
  loopChange,
  type LoopSettings,
  type ToolLoop,
  type ToolLoopChange,
  ToolLoops,
} from "./tool_loops.ts";

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SETTINGS: LoopSettings = { maxOpen: 2, ttlMs: 60_000 };
const TOOL = { name: "f", parameters: { type: "object" } };
const quiet = new Logger("error", () => {});

function request(opts: { results?: string[]; tools?: boolean } = {}): IRRequest {
  const messages: IRMessage[] = [{ role: "user", parts: [{ type: "text", text: "погода?" }] }];
  if (opts.results?.length) {
    messages.push({
      role: "assistant",
      parts: opts.results.map((id) => ({ type: "tool_call" as const, id, name: "f", arguments: "{}" })),
    });
    messages.push({
      role: "user",
      parts: opts.results.map((callId) => ({ type: "tool_result" as const, callId, content: "ясно" })),
    });
  }
  return {
    model: "gamma-2.5",
    system: [],
    messages,
    stream: false,
    includeUsage: false,
    tools: opts.tools === false ? [] : [TOOL],
    stop: [],
  };
}

const toolCalls = (...ids: string[]): AnswerSummary => ({
  status: "ok",
  stopReason: "tool_calls",
  toolCallIds: ids,
});
const stopped: AnswerSummary = { status: "ok", stopReason: "stop", toolCallIds: [] };

/** A store on an in-memory KV, a clock the test moves, and one admission helper. */
async function fixture(settings = SETTINGS) {
  const store = await KvStore.open(":memory:");
  const clock = { now: 1_000_000 };
  let n = 0;
  const toolLoops = new ToolLoops(settings, quiet);
  const admit = (keyId: string, ir: IRRequest) =>
    toolLoops.admit({
      store: store as Store,
      config: {} as never,
      keyId,
      key: keyRecord(keyId),
      requestId: `req_${++n}`,
      ir,
      now: () => clock.now,
    });
  /** Admits, then settles with `answer`, and waits for the write. */
  const run = async (keyId: string, ir: IRRequest, answer: AnswerSummary) => {
    const s = await admit(keyId, ir);
    s?.settled(answer);
    await admit(keyId, request({ tools: false, results: ["none"] })); // waits for the key's writes
    return s;
  };
  const loops = (keyId: string) => store.listMembers<ToolLoop>(LOOP_SET, keyId, clock.now);
  return { store, clock, admit, run, loops, [Symbol.dispose]: () => store.close() };
}

async function refusal(p: Promise<unknown>): Promise<GatewayError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  assert.fail("expected a GatewayError");
}

Deno.test("tool loops: an answer ending in tool calls opens a loop with its call ids and expiry", async () => {
  using f = await fixture();
  await f.run("k1", request(), toolCalls("call_a", "call_b"));
  const [loop, ...rest] = await f.loops("k1");
  assert.equal(rest.length, 0);
  assert.deepEqual(loop, {
    keyId: "k1",
    id: "req_1",
    callIds: ["call_a", "call_b"],
    updatedAt: 1_000_000,
    expiresAt: 1_060_000,
  });
});

Deno.test("tool loops: at the limit a new request is refused with the time until a slot frees", async () => {
  using f = await fixture();
  await f.run("k1", request(), toolCalls("call_a"));
  f.clock.now += 10_000;
  await f.run("k1", request(), toolCalls("call_b"));
  f.clock.now += 1_500;
  const err = await refusal(f.admit("k1", request()));
  assert.equal(err.code, "delta_key_pause_limit");
  assert.equal(err.status, 429);
  assert.equal(err.retryAfter, 49); // the first loop expires 48.5 s from now
  assert.match(err.detail!, /2 из 2/);
  // Another key is unaffected.
  assert.ok(await f.admit("k2", request()));
});

Deno.test("tool loops: a continuation is admitted at the limit and closes its loop; a new one may then open", async () => {
  using f = await fixture();
  await f.run("k1", request(), toolCalls("call_a"));
  await f.run("k1", request(), toolCalls("call_b"));
  await f.run("k1", request({ results: ["call_a"] }), stopped);
  assert.deepEqual((await f.loops("k1")).map((l) => l.callIds), [["call_b"]]);
  await f.run("k1", request(), toolCalls("call_c"));
  assert.equal((await f.loops("k1")).length, 2);
});

Deno.test("tool loops: a continuation that again ends in tool calls keeps the loop with new ids and expiry", async () => {
  using f = await fixture();
  await f.run("k1", request(), toolCalls("call_a"));
  f.clock.now += 30_000;
  await f.run("k1", request({ results: ["call_a"] }), toolCalls("call_a2"));
  const loops = await f.loops("k1");
  assert.equal(loops.length, 1);
  assert.equal(loops[0]!.id, "req_1");
  assert.deepEqual(loops[0]!.callIds, ["call_a2"]);
  assert.equal(loops[0]!.expiresAt, f.clock.now + 60_000);
  // The old call id no longer continues it: at the limit such a request would count as new.
  await f.run("k1", request(), toolCalls("call_b"));
  assert.equal(
    (await refusal(f.admit("k1", request({ results: ["call_a"] })))).code,
    "delta_key_pause_limit",
  );
  assert.ok(await f.admit("k1", request({ results: ["call_a2"] })));
});

Deno.test("tool loops: failed or cancelled answers open and close nothing", async () => {
  using f = await fixture();
  await f.run("k1", request(), { status: "error", stopReason: "tool_calls", toolCallIds: ["call_x"] });
  await f.run("k1", request(), { status: "cancelled", stopReason: undefined, toolCallIds: ["call_y"] });
  assert.equal((await f.loops("k1")).length, 0);
  await f.run("k1", request(), toolCalls("call_a"));
  await f.run("k1", request({ results: ["call_a"] }), {
    status: "error",
    stopReason: undefined,
    toolCallIds: [],
  });
  assert.deepEqual((await f.loops("k1")).map((l) => l.callIds), [["call_a"]]);
  // The client retries the same results: still a continuation, and this time it closes the loop.
  await f.run("k1", request({ results: ["call_a"] }), stopped);
  assert.equal((await f.loops("k1")).length, 0);
});

Deno.test("tool loops: an expired loop frees its slot", async () => {
  using f = await fixture();
  await f.run("k1", request(), toolCalls("call_a"));
  await f.run("k1", request(), toolCalls("call_b"));
  f.clock.now += 59_999;
  await refusal(f.admit("k1", request()));
  f.clock.now += 1;
  assert.equal((await f.loops("k1")).length, 0);
  assert.ok(await f.admit("k1", request()));
  // Its results no longer continue anything: the request is new.
  await f.run("k1", request({ results: ["call_a"] }), toolCalls("call_c"));
  assert.equal((await f.loops("k1")).length, 1);
});

Deno.test("tool loops: a request continuing two loops merges them into the first", async () => {
  using f = await fixture({ maxOpen: 3, ttlMs: 60_000 });
  await f.run("k1", request(), toolCalls("call_a"));
  f.clock.now += 1;
  await f.run("k1", request(), toolCalls("call_b"));
  await f.run("k1", request({ results: ["call_a", "call_b"] }), toolCalls("call_c"));
  const loops = await f.loops("k1");
  assert.deepEqual(loops.map((l) => [l.id, l.callIds]), [["req_1", ["call_c"]]]);
});

Deno.test("tool loops: a request without tools and tool results takes no store round trip and is admitted at the limit", async () => {
  using f = await fixture();
  await f.run("k1", request(), toolCalls("call_a"));
  await f.run("k1", request(), toolCalls("call_b"));
  const store = f.store as Store;
  let reads = 0;
  const counting = new Proxy(store, {
    get: (t, p) => p === "listMembers" ? (reads++, t.listMembers.bind(t)) : Reflect.get(t, p, t),
  });
  const a = {
    store: counting,
    config: {} as never,
    keyId: "k1",
    key: keyRecord("k1"),
    requestId: "r",
    now: () => f.clock.now,
  };
  const toolLoops = new ToolLoops(SETTINGS, quiet);
  assert.equal(await toolLoops.admit({ ...a, ir: request({ tools: false }) }), undefined);
  assert.equal(reads, 0);
  // Without tools but with results for an open loop: a continuation, whose answer closes it.
  const s = await toolLoops.admit({ ...a, ir: request({ tools: false, results: ["call_b"] }) });
  assert.equal(reads, 1);
  s!.settled(stopped);
  await toolLoops.admit({ ...a, ir: request({ tools: false, results: ["none"] }) }); // its write landed
  assert.deepEqual((await f.loops("k1")).map((l) => l.callIds), [["call_a"]]);
});

Deno.test("tool loops: the next request waits for the previous answer's write", async () => {
  const kv = await KvStore.open(":memory:");
  // A store whose loop writes land 30 ms late (a remote database, a busy disk).
  const slow = new Proxy(kv as Store, {
    get: (t, p) =>
      p === "updateMembers"
        ? (set: string, keyId: string, c: ToolLoopChange, now: number) =>
          delay(30).then(() => t.updateMembers(set, keyId, c, now))
        : Reflect.get(t, p, t),
  });
  try {
    const toolLoops = new ToolLoops({ maxOpen: 1, ttlMs: 60_000 }, quiet);
    const admit = (ir: IRRequest, requestId: string) =>
      toolLoops.admit({
        store: slow,
        config: {} as never,
        keyId: "k1",
        key: keyRecord("k1"),
        requestId,
        ir,
        now: () => 1,
      });
    const s = (await admit(request(), "r1")) as RequestSession;
    s.settled(toolCalls("call_a")); // the write is in flight; the next admission must see it
    await refusal(admit(request(), "r2"));
    const cont = await admit(request({ results: ["call_a"] }), "r3");
    cont!.settled(stopped);
    assert.ok(await admit(request(), "r4"));
  } finally {
    kv.close();
  }
});

Deno.test("loopChange: the rule as data", () => {
  const now = 5;
  assert.equal(loopChange("k", "r", [], stopped, now, 10), undefined);
  assert.equal(loopChange("k", "r", ["l1"], { ...toolCalls("c"), status: "error" }, now, 10), undefined);
  assert.deepEqual(loopChange("k", "r", ["l1"], stopped, now, 10), { remove: ["l1"] });
  assert.deepEqual(loopChange("k", "r", [], toolCalls("c", "c"), now, 10), {
    remove: [],
    put: { keyId: "k", id: "r", callIds: ["c"], updatedAt: 5, expiresAt: 15 },
  });
  // A tool_calls stop without any call id (a malformed upstream) opens nothing.
  assert.deepEqual(loopChange("k", "r", ["l1"], toolCalls(), now, 10), { remove: ["l1"] });
});
