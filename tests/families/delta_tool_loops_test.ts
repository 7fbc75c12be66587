/**
 * Gamma/eta client tool loops per key (spec §7.5 delta_key_pause_limit; src/families/delta/tool_loops.ts)
 * through a running gateway on all three surfaces: an answer calling a client tool opens a loop, a request with
 * that call's result continues and closes it, at DELTA_MAX_OPEN_LOOPS a new request gets 429 with nothing held
 * or sent upstream, loops expire after DELTA_LOOP_TTL_MS, survive a restart on the same store (KV file and
 * Postgres), and belong to one key.
 */
import assert from "node:assert/strict";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";
import { pgGatewayTest } from "../support/pg_harness.ts";
import { SURFACE_PATH } from "../support/sse_client.ts";

type Surface = "messages" | "chat" | "responses";
const SURFACES: Surface[] = ["messages", "chat", "responses"];
const MODEL: Record<Surface, string> = {
  messages: "gamma-2.5",
  chat: "delta-eta-4.6-high",
  responses: "gamma-2.5-fast",
};
const schema = { type: "object", properties: { query: { type: "string" } } };
const TOOLS: Record<Surface, unknown[]> = {
  messages: [{ name: "lookup", description: "Поиск", input_schema: schema }],
  chat: [{ type: "function", function: { name: "lookup", parameters: schema } }],
  responses: [{ type: "function", name: "lookup", parameters: schema }],
};
const QUESTION = "Какая погода?";

/** A first turn: the question (with `directives`), tools offered unless `tools` is false. */
function newTurn(surface: Surface, directives: string, stream: boolean, tools = true) {
  const text = `${QUESTION} ${directives}`;
  const body: Record<string, unknown> = surface === "responses"
    ? { model: MODEL[surface], max_output_tokens: 200, stream, input: text }
    : { model: MODEL[surface], max_tokens: 200, stream, messages: [{ role: "user", content: text }] };
  if (tools) body.tools = TOOLS[surface];
  return body;
}

/** The next turn: the history with the call `callId` and the client's result for it (`result` may hold directives). */
function resultTurn(surface: Surface, callId: string, result: string, stream: boolean) {
  const args = '{"query":"погода"}';
  if (surface === "messages") {
    return {
      model: MODEL[surface],
      max_tokens: 200,
      stream,
      tools: TOOLS[surface],
      messages: [
        { role: "user", content: QUESTION },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: callId, name: "lookup", input: { query: "погода" } }],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: callId, content: result }] },
      ],
    };
  }
  if (surface === "chat") {
    return {
      model: MODEL[surface],
      max_tokens: 200,
      stream,
      tools: TOOLS[surface],
      messages: [
        { role: "user", content: QUESTION },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: callId, type: "function", function: { name: "lookup", arguments: args } }],
        },
        { role: "tool", tool_call_id: callId, content: result },
      ],
    };
  }
  return {
    model: MODEL[surface],
    max_output_tokens: 200,
    stream,
    tools: TOOLS[surface],
    input: [
      { role: "user", content: QUESTION },
      { type: "function_call", call_id: callId, name: "lookup", arguments: args },
      { type: "function_call_output", call_id: callId, output: result },
    ],
  };
}

interface Answer {
  status: number;
  text: string;
  headers: Headers;
  /** The client tool call id the answer made, if any (the simulator's ids are `call_sim…` on every surface). */
  callId: string | undefined;
}

async function send(t: TestGateway, key: string, surface: Surface, body: unknown): Promise<Answer> {
  const res = await post(t.url + SURFACE_PATH[surface], key, body, ANTHROPIC_HEADERS);
  const text = await res.text();
  return { status: res.status, text, headers: res.headers, callId: /"(call_sim[0-9a-z]+)"/.exec(text)?.[1] };
}

/** A new turn that calls the tool: 200 and the call id (the loop it opened). */
async function openLoop(t: TestGateway, key: string, surface: Surface, stream: boolean): Promise<string> {
  const a = await send(t, key, surface, newTurn(surface, "[[sim:tool]]", stream));
  assert.equal(a.status, 200, `${surface} stream=${stream}: ${a.text}`);
  assert.ok(a.callId, `${surface} stream=${stream}: a tool call in ${a.text}`);
  return a.callId;
}

/** The request is refused with delta_key_pause_limit before anything is held or sent upstream. */
async function assertRefused(
  t: TestGateway,
  key: { id: string; key: string },
  surface: Surface,
  body: unknown,
) {
  const acc = t.gw.app.accounts.get(key.id)!;
  const available = t.gw.app.accounts.available(acc);
  const sent = t.sim.requests.length;
  const a = await send(t, key.key, surface, body);
  const where = `${surface}: ${a.text}`;
  assert.equal(a.status, 429, where);
  assert.ok(a.text.includes('"delta_key_pause_limit"'), where);
  assert.ok(a.text.includes("Завершите один из открытых циклов"), where);
  assert.equal(a.headers.get("x-gateway-hold-usd"), null, where);
  const retryAfter = Number(a.headers.get("retry-after"));
  assert.ok(retryAfter >= 1 && retryAfter <= 600, `Retry-After ${retryAfter}`);
  assert.equal(t.sim.requests.length, sent, `${where}: nothing sent upstream`);
  assert.equal(acc.held, 0n, `${where}: nothing held`);
  assert.equal(t.gw.app.accounts.available(acc), available, `${where}: nothing charged`);
  return a;
}

Deno.test("gamma/eta tool loops: at the limit a new request is refused on every surface, a continuation is admitted and frees the slot", () =>
  withGateway(async (t) => {
    for (const refused of SURFACES) {
      const [first, second] = SURFACES.filter((s) => s !== refused) as [Surface, Surface];
      const k = await t.newKey("5.00");
      const firstCall = await openLoop(t, k.key, first, true);
      await openLoop(t, k.key, second, false);

      // Two loops open: a third new request is refused, JSON or stream, with nothing held or sent.
      await assertRefused(t, k, refused, newTurn(refused, "[[sim:tool]]", false));
      await assertRefused(t, k, refused, newTurn(refused, "", true));
      // A request offering no tools cannot open a loop: admitted.
      const plain = await send(t, k.key, refused, newTurn(refused, "", false, false));
      assert.equal(plain.status, 200, plain.text);
      // Another key is unaffected.
      const other = await t.newKey("1.00");
      await openLoop(t, other.key, refused, false);

      // The result for the first loop's call continues it (admitted at the limit) and, answered, closes it.
      const cont = await send(t, k.key, first, resultTurn(first, firstCall, "Солнечно, +20", true));
      assert.equal(cont.status, 200, cont.text);
      assert.ok(cont.text.includes("Результат"), cont.text); // the simulator saw the tool result
      assert.equal(cont.callId, undefined);
      // A slot is free again: a new loop opens, and the key is back at the limit.
      await openLoop(t, k.key, refused, true);
      await assertRefused(t, k, first, newTurn(first, "", false));
    }
  }, { DELTA_MAX_OPEN_LOOPS: "2" }));

Deno.test("gamma/eta tool loops: a continuation that calls a tool again keeps its loop; a failed answer opens none", () =>
  withGateway(async (t) => {
    const k = await t.newKey("5.00");
    const call = await openLoop(t, k.key, "messages", false);
    await assertRefused(t, k, "chat", newTurn("chat", "", false));
    // The client's result asks for another call: the same loop, now waiting for the new call.
    const again = await send(t, k.key, "messages", resultTurn("messages", call, "ещё [[sim:tool]]", false));
    assert.equal(again.status, 200, again.text);
    assert.ok(again.callId && again.callId !== call, again.text);
    await assertRefused(t, k, "responses", newTurn("responses", "", true));
    // Its result closes it (a Chat client may send it: the loop is the key's, not the surface's).
    const done = await send(t, k.key, "chat", resultTurn("chat", again.callId, "Готово", false));
    assert.equal(done.status, 200, done.text);
    // A stream that fails after its tool call opens no loop.
    const failed = await send(
      t,
      k.key,
      "responses",
      newTurn("responses", "[[sim:tool]] [[sim:fault=error_mid]]", true),
    );
    assert.equal(failed.status, 200);
    assert.ok(failed.text.includes("delta_upstream_error"), failed.text);
    // So the key still has its slot.
    await openLoop(t, k.key, "chat", true);
    await assertRefused(t, k, "messages", newTurn("messages", "", false));
  }, { DELTA_MAX_OPEN_LOOPS: "1" }));

Deno.test("gamma/eta tool loops: an open loop expires after DELTA_LOOP_TTL_MS and frees its slot", () =>
  withGateway(async (t) => {
    const k = await t.newKey("5.00");
    const call = await openLoop(t, k.key, "chat", false);
    const refused = await assertRefused(t, k, "responses", newTurn("responses", "", false));
    assert.equal(refused.headers.get("retry-after"), "2"); // the loop expires within 1.5 s, rounded up
    await new Promise((r) => setTimeout(r, 1_600));
    await openLoop(t, k.key, "responses", false);
    // The expired loop's result is now a new request, refused at the limit.
    await assertRefused(t, k, "chat", resultTurn("chat", call, "поздно", false));
  }, { DELTA_MAX_OPEN_LOOPS: "1", DELTA_LOOP_TTL_MS: "1500" }));

/** Two open loops at a limit of 2, a restart on the same store: still at the limit, and a loop continues. */
async function loopsSurviveRestart(env: Record<string, string>): Promise<void> {
  env = { ...env, DELTA_MAX_OPEN_LOOPS: "2" };
  let key = { id: "", key: "" };
  let call = "";
  await withGateway(async (t) => {
    key = await t.newKey("5.00");
    call = await openLoop(t, key.key, "responses", true);
    await openLoop(t, key.key, "messages", false);
  }, env);
  await withGateway(async (t) => {
    await assertRefused(t, key, "chat", newTurn("chat", "[[sim:tool]]", true));
    const cont = await send(t, key.key, "responses", resultTurn("responses", call, "Солнечно", false));
    assert.equal(cont.status, 200, cont.text);
    await openLoop(t, key.key, "chat", false);
  }, env);
}

Deno.test("gamma/eta tool loops: open loops survive a restart on the same KV file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tool_loops_" });
  try {
    await loopsSurviveRestart({ DATABASE_URL: "", DATA_DIR: dir });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

pgGatewayTest(
  "gamma/eta tool loops: open loops survive a restart on the same Postgres store",
  loopsSurviveRestart,
);
