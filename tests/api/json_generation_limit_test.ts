/**
 * The generation limit of a non-streaming request (UPSTREAM_GENERATION_TIMEOUT_MS) through a running gateway,
 * alpha and beta on the three surfaces (alpha: Chat native, Messages and Responses translated; beta: Messages
 * native). A JSON answer's head comes only with the whole answer, so the headers timeout does not bound it: an
 * answer slower than the headers timeout but within the limit is the ordinary 200 billed at its usage; past
 * the limit it is 504 `upstream_timeout` (spec §7.2), the upstream cancelled, free. A stream's head stays bound
 * by the headers timeout; gamma/eta and theta keep their own run limits. The simulator's `delay` holds the
 * response head; `fault=stall` sends the head and half the JSON, then nothing.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../src/config/env.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { ANTHROPIC_HEADERS, type TestGateway, withGateway } from "../support/harness.ts";
import { SURFACE_PATH, surfaceBody } from "../support/sse_client.ts";
import { tokenCost } from "../support/usage_rows.ts";

const SURFACES = ["messages", "chat", "responses"] as const;
type Surface = typeof SURFACES[number];
const MODELS = ["k3", "beta-sonnet-5"] as const;
const GENERATION_MS = 1_500;
const LIMITS = { UPSTREAM_GENERATION_TIMEOUT_MS: String(GENERATION_MS), UPSTREAM_HEADERS_TIMEOUT_MS: "300" };
const CYRILLIC = /[а-яё]/i;

interface Sent {
  where: string;
  surface: Surface;
  status: number;
  requestId: string;
  /** The parsed JSON answer, or a stream's raw text. */
  json: any;
  contentType: string;
}

async function send(
  t: TestGateway,
  key: string,
  model: string,
  surface: Surface,
  text: string,
  stream: boolean,
): Promise<Sent> {
  const res = await fetch(t.url + SURFACE_PATH[surface], {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...ANTHROPIC_HEADERS },
    body: JSON.stringify(surfaceBody(surface, model, text, stream)),
    // Bounded: a gateway that never answers fails the test instead of hanging it.
    signal: AbortSignal.timeout(15_000),
  });
  const contentType = res.headers.get("content-type") ?? "";
  const body = await res.text();
  return {
    where: `${model} ${surface} stream=${stream} «${text}»`,
    surface,
    status: res.status,
    requestId: res.headers.get("request-id") ?? "",
    json: contentType.startsWith("application/json") ? JSON.parse(body) : body,
    contentType,
  };
}

/** Every alpha/beta × surface pair, sent at once (each waits on the simulator, not on the others). */
function everywhere(t: TestGateway, key: string, text: string, stream: boolean): Promise<Sent[]> {
  return Promise.all(MODELS.flatMap((m) => SURFACES.map((s) => send(t, key, m, s, text, stream))));
}

/** The §7.1 envelope of the surface with the code, as an HTTP error (not a stream); the error object. */
function assertHttpError(s: Sent, status: number, code: string) {
  assert.equal(s.status, status, `${s.where}: ${JSON.stringify(s.json)}`);
  assert.ok(s.contentType.startsWith("application/json"), `${s.where}: a JSON error, not a stream`);
  const { error } = s.json;
  assert.equal(error.code, code, s.where);
  assert.equal(error.type, "timeout_error", s.where);
  assert.equal(error.request_id, s.requestId, s.where);
  assert.equal(s.json.request_id, s.requestId, s.where);
  // Messages: the Anthropic shape; Chat Completions and Responses: the OpenAI shape, no outer type.
  assert.equal(s.json.type, s.surface === "messages" ? "error" : undefined, s.where);
  return error;
}

/** The answer's text and usage as the surface shapes them, after its shape is checked. */
function answerOf(s: Sent): { text: string; input: number; output: number } {
  assert.equal(s.status, 200, `${s.where}: ${JSON.stringify(s.json)}`);
  const j = s.json;
  if (s.surface === "messages") {
    assert.equal(j.type, "message", s.where);
    assert.equal(j.stop_reason, "end_turn", s.where);
    return { text: j.content[0].text, input: j.usage.input_tokens, output: j.usage.output_tokens };
  }
  if (s.surface === "chat") {
    assert.equal(j.object, "chat.completion", s.where);
    assert.equal(j.choices[0].finish_reason, "stop", s.where);
    return {
      text: j.choices[0].message.content,
      input: j.usage.prompt_tokens,
      output: j.usage.completion_tokens,
    };
  }
  assert.equal(j.object, "response", s.where);
  assert.equal(j.status, "completed", s.where);
  const msg = j.output.find((o: any) => o.type === "message");
  return { text: msg.content[0].text, input: j.usage.input_tokens, output: j.usage.output_tokens };
}

/** The key's usage rows by request id. */
async function rowsOf(t: TestGateway, key: string): Promise<Map<string, Record<string, any>>> {
  const res = await fetch(`${t.url}/v1/usage/requests?limit=100`, {
    headers: { authorization: `Bearer ${key}` },
  });
  assert.equal(res.status, 200);
  const rows = (await res.json()).data as Record<string, any>[];
  return new Map(rows.map((r) => [r.request_id, r]));
}

/** No hold left; spent and balance moved by exactly `spent`. */
async function assertAccount(t: TestGateway, id: string, initial: string, spent: bigint) {
  const a = (await t.admin("GET", `/admin/keys/${id}`)).json;
  assert.deepEqual(
    [a.held_usd, a.spent_usd, a.balance_usd],
    ["0.00", formatUsd(spent), formatUsd(parseUsd(initial) - spent)],
  );
}

async function eventually(check: () => boolean, what: string) {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), what);
}

Deno.test("generation limit: a JSON answer slower than the headers timeout, within the limit, is the 200 billed at its usage — alpha and beta, every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("5.00");
    // The simulator holds the head (and so the whole JSON answer) 800 ms: past the 300 ms headers timeout.
    const sent = await everywhere(t, k.key, "подумай [[sim:delay=800]] [[sim:words=9]]", false);
    const rows = await rowsOf(t, k.key);
    assert.equal(rows.size, sent.length);
    let spent = 0n;
    for (const s of sent) {
      const a = answerOf(s);
      assert.match(a.text, CYRILLIC, s.where);
      assert.equal(a.text.split(/\s+/).filter(Boolean).length, 9, `${s.where}: ${a.text}`);
      assert.equal(a.output, 9, s.where);
      // Charged exactly the usage the upstream reported and the client saw.
      const row = rows.get(s.requestId);
      assert.ok(row, `${s.where}: a usage row`);
      assert.deepEqual(
        [row.status, row.usage_source, row.input_tokens, row.cached_input_tokens, row.output_tokens],
        ["ok", "upstream", a.input, 0, 9],
        s.where,
      );
      const charge = tokenCost(row);
      assert.ok(charge > 0n, s.where);
      assert.equal(row.charged_usd, formatUsd(charge), s.where);
      assert.equal(row.written_off_usd, "0.00", s.where);
      spent += charge;
    }
    await assertAccount(t, k.id, "5.00", spent);
  }, LIMITS));

Deno.test("generation limit: a JSON answer past the limit is 504 upstream_timeout, free — alpha and beta, every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("5.00");
    // A provider still computing (no head yet), and one whose head came but whose body stopped half-way.
    const sent = [
      ...await everywhere(t, k.key, "долгая генерация [[sim:delay=8000]]", false),
      ...await everywhere(t, k.key, "застрявший ответ [[sim:fault=stall]]", false),
    ];
    for (const s of sent) {
      const err = assertHttpError(s, 504, "upstream_timeout");
      assert.equal(
        err.message,
        `Провайдер не начал отвечать вовремя; запрос не оплачивается. Предел ожидания полного ответа: ${
          GENERATION_MS / 1000
        } с. [upstream_timeout · ${s.requestId}]`,
        s.where,
      );
      assert.equal(err.action, "Повторите запрос; для длинных ответов используйте потоковый режим.", s.where);
    }
    // Nothing was delivered and no usage came: the hold is released, nothing charged (docs/billing.md).
    const rows = await rowsOf(t, k.key);
    assert.equal(rows.size, sent.length);
    for (const s of sent) {
      const row = rows.get(s.requestId)!;
      assert.deepEqual(
        [row.status, row.input_tokens, row.output_tokens, row.charged_usd],
        ["error", 0, 0, "0.00"],
        s.where,
      );
    }
    await assertAccount(t, k.id, "5.00", 0n);
  }, LIMITS));

/**
 * A raw upstream that reads each request and never finishes its answer: `no-head` sends nothing, `half-body`
 * sends a 200 head and half a JSON body. Counts the connections the gateway closed (read hits EOF or fails).
 */
function unfinishedUpstream(mode: "no-head" | "half-body") {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  let accepted = 0;
  let closed = 0;
  const serve = async (conn: Deno.Conn) => {
    accepted++;
    const buf = new Uint8Array(64 * 1024);
    let seen = "";
    let answered = false;
    try {
      for (;;) {
        const n = await conn.read(buf);
        if (n === null) break;
        seen += new TextDecoder().decode(buf.subarray(0, n));
        if (!answered && mode === "half-body" && seen.includes("\r\n\r\n")) {
          answered = true;
          await conn.write(new TextEncoder().encode(
            'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"id":"half",',
          ));
        }
      }
    } catch { /* reset by the peer: closed too */ }
    closed++;
  };
  (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      serve(conn);
    }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    get accepted() {
      return accepted;
    },
    get closed() {
      return closed;
    },
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
    },
  };
}

for (const client of ["wire", "fetch"] as const) {
  Deno.test(`generation limit: the upstream call it cuts is cancelled — its connection closed (UPSTREAM_CLIENT=${client})`, async () => {
    for (const mode of ["no-head", "half-body"] as const) {
      const up = unfinishedUpstream(mode);
      try {
        await withGateway(async (t) => {
          const k = await t.newKey("5.00");
          const sent = await everywhere(t, k.key, "долгая генерация", false);
          for (const s of sent) assertHttpError(s, 504, "upstream_timeout");
          assert.equal(up.accepted, sent.length, `${mode}: one connection per request`);
          await eventually(() => up.closed === sent.length, `${mode}: ${up.closed} of ${sent.length} closed`);
          await assertAccount(t, k.id, "5.00", 0n);
        }, { ...LIMITS, UPSTREAM_CLIENT: client, ALPHA_UPSTREAM_URL: up.url, BETA_UPSTREAM_URL: up.url });
      } finally {
        up.close();
      }
    }
  });
}

Deno.test("generation limit: a stream's head is still bound by the headers timeout — 504 upstream_timeout, free — alpha and beta, every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("5.00");
    // 1 s: past the headers timeout (300 ms), within the generation limit (1.5 s), which is not a stream's.
    const sent = await everywhere(t, k.key, "поток [[sim:delay=1000]]", true);
    for (const s of sent) {
      const err = assertHttpError(s, 504, "upstream_timeout");
      // The headers timeout's own answer: the table message, no detail.
      assert.equal(
        err.message,
        `Провайдер не начал отвечать вовремя; запрос не оплачивается. [upstream_timeout · ${s.requestId}]`,
        s.where,
      );
    }
    // A stream whose head comes in time is untouched, however long the answer then runs.
    const fine = await everywhere(t, k.key, "поток [[sim:words=5]]", true);
    for (const s of fine) {
      assert.equal(s.status, 200, s.where);
      assert.ok(s.contentType.startsWith("text/event-stream"), s.where);
    }
    const rows = await rowsOf(t, k.key);
    let spent = 0n;
    for (const s of sent) assert.deepEqual([rows.get(s.requestId)!.charged_usd], ["0.00"], s.where);
    for (const s of fine) spent += parseUsd(rows.get(s.requestId)!.charged_usd);
    assert.ok(spent > 0n);
    await assertAccount(t, k.id, "5.00", spent);
  }, LIMITS));

Deno.test("generation limit: families with a run limit keep theirs — a gamma or theta JSON run past the generation limit, within its own, is the 200", () =>
  withGateway(async (t) => {
    const k = await t.newKey("5.00");
    const text = "подумай [[sim:delay=2000]] [[sim:words=4]]";
    // Theta runs one request of a key at a time on an account (two in the harness): its two surfaces get a
    // key each, so all five runs wait at once.
    const k2 = await t.newKey("5.00");
    const sent = await Promise.all([
      ...SURFACES.map((s) => send(t, k.key, "gamma-2.5", s, text, false)),
      send(t, k.key, "theta3.7-plus", "chat", text, false),
      send(t, k2.key, "theta3.7-plus", "messages", text, false),
    ]);
    for (const s of sent) assert.equal(answerOf(s).output, 4, s.where);
  }, { ...LIMITS, DELTA_RUN_TIMEOUT_MS: "8000", THETA_GENERATION_TIMEOUT_MS: "8000" }));

Deno.test("UPSTREAM_GENERATION_TIMEOUT_MS: 600 s by default, a positive integer of ms", () => {
  assert.equal(parseConfig({}).UPSTREAM_GENERATION_TIMEOUT_MS, 600_000);
  assert.equal(parseConfig({ UPSTREAM_GENERATION_TIMEOUT_MS: "1500" }).UPSTREAM_GENERATION_TIMEOUT_MS, 1_500);
  for (const bad of ["0", "-1", "1.5", "ten"]) {
    assert.throws(
      () => parseConfig({ UPSTREAM_GENERATION_TIMEOUT_MS: bad }),
      /UPSTREAM_GENERATION_TIMEOUT_MS/,
      bad,
    );
  }
});
