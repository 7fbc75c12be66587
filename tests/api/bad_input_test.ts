/**
 * The bad-input table of the core issue: every malformed header, body, path or key state gives its
 * exact status and code, in the right envelope, with the message tail and the request-id header,
 * and leaves the key's money untouched.
 */
import assert from "node:assert/strict";
import { ANTHROPIC_HEADERS, startTestGateway } from "../support/harness.ts";

type Env = "anthropic" | "openai" | "detail" | "auth-openai" | "auth-anthropic";

interface Row {
  name: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: BodyInit | (() => BodyInit);
  status: number;
  code: string;
  env: Env;
  param?: string | null;
  retryAfter?: boolean;
  allow?: string;
}

const chat = (model = "k3", extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model, messages: [{ role: "user", content: "Привет" }], ...extra });
const msgs = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    model: "beta-haiku-4-5",
    max_tokens: 16,
    messages: [{ role: "user", content: "Привет" }],
    ...extra,
  });

Deno.test("bad input table: status, code, envelope, tail and request-id for every row", async () => {
  const t = await startTestGateway({ BODY_LIMIT_BYTES: "2000000" });
  try {
    const good = await t.newKey("10.00");
    const revoked = await t.newKey("10.00");
    await t.admin("POST", `/admin/keys/${revoked.id}/revoke`, {});
    const expired = await t.newKey("10.00");
    await t.admin("POST", `/admin/keys/${expired.id}/expire`, { at: "2020-01-01T00:00:00Z" });
    const suspended = await t.newKey("10.00");
    await t.admin("POST", `/admin/keys/${suspended.id}/suspend`, {
      until: new Date(Date.now() + 90_000).toISOString(),
    });
    const paused = await t.newKey("10.00");
    await t.admin("POST", `/admin/keys/${paused.id}/theta`, { paused: true });
    const empty = await t.newKey("0.00");
    const poor = await t.newKey("0.001");

    const bearer = (k: string) => ({ authorization: `Bearer ${k}` });
    const G = bearer(good.key);
    const A = { ...ANTHROPIC_HEADERS, "x-api-key": good.key };
    const unknownKey = "gd-" + "A".repeat(43);

    const rows: Row[] = [
      {
        name: "no key",
        path: "/v1/chat/completions",
        body: chat(),
        status: 401,
        code: "missing_api_key",
        env: "auth-openai",
      },
      {
        name: "empty bearer",
        path: "/v1/chat/completions",
        headers: { authorization: "Bearer " },
        body: chat(),
        status: 401,
        code: "invalid_api_key",
        env: "auth-openai",
      },
      {
        name: "short gd key",
        path: "/v1/chat/completions",
        headers: bearer("gd-short"),
        body: chat(),
        status: 401,
        code: "invalid_api_key",
        env: "auth-openai",
      },
      {
        name: "foreign key prefix",
        path: "/v1/chat/completions",
        headers: bearer("sk-" + "a".repeat(43)),
        body: chat(),
        status: 401,
        code: "invalid_api_key",
        env: "auth-openai",
      },
      {
        name: "unknown well-formed key",
        path: "/v1/chat/completions",
        headers: bearer(unknownKey),
        body: chat(),
        status: 401,
        code: "invalid_api_key",
        env: "auth-openai",
      },
      {
        name: "basic auth",
        path: "/v1/responses",
        headers: { authorization: "Basic dXNlcjpwYXNz" },
        body: chat(),
        status: 401,
        code: "invalid_api_key",
        env: "auth-openai",
      },
      {
        name: "unknown x-api-key on messages",
        path: "/v1/messages",
        headers: { ...ANTHROPIC_HEADERS, "x-api-key": unknownKey },
        body: msgs(),
        status: 401,
        code: "invalid_api_key",
        env: "auth-anthropic",
      },
      {
        name: "no key on messages",
        path: "/v1/messages",
        headers: ANTHROPIC_HEADERS,
        body: msgs(),
        status: 401,
        code: "missing_api_key",
        env: "auth-anthropic",
      },
      {
        name: "revoked key",
        path: "/v1/chat/completions",
        headers: bearer(revoked.key),
        body: chat(),
        status: 401,
        code: "api_key_revoked",
        env: "auth-openai",
      },
      {
        name: "expired key",
        path: "/v1/chat/completions",
        headers: bearer(expired.key),
        body: chat(),
        status: 401,
        code: "api_key_expired",
        env: "auth-openai",
      },
      {
        name: "suspended key",
        path: "/v1/chat/completions",
        headers: bearer(suspended.key),
        body: chat(),
        status: 429,
        code: "api_key_suspended",
        env: "auth-openai",
        retryAfter: true,
      },
      {
        name: "theta paused",
        path: "/v1/chat/completions",
        headers: bearer(paused.key),
        body: chat("theta3.8-max"),
        status: 403,
        code: "api_key_paused",
        env: "auth-openai",
      },
      {
        name: "theta paused on theta path",
        path: "/theta/v1/messages",
        headers: { ...ANTHROPIC_HEADERS, "x-api-key": paused.key },
        body: msgs({ model: "theta3.7-plus" }),
        status: 403,
        code: "api_key_paused",
        env: "auth-anthropic",
      },
      {
        name: "zero credit",
        path: "/v1/chat/completions",
        headers: bearer(empty.key),
        body: chat(),
        status: 402,
        code: "insufficient_credit",
        env: "openai",
      },
      {
        name: "reserve over credit",
        path: "/v1/chat/completions",
        headers: bearer(poor.key),
        body: chat("k3", { max_tokens: 30000 }),
        status: 402,
        code: "request_reserve_exceeds_credit",
        env: "openai",
      },
      {
        name: "no anthropic-version",
        path: "/v1/messages",
        headers: { "x-api-key": good.key },
        body: msgs(),
        status: 400,
        code: "invalid_request",
        env: "anthropic",
        param: "anthropic-version",
      },
      {
        name: "bad anthropic-version",
        path: "/v1/messages",
        headers: { "x-api-key": good.key, "anthropic-version": "latest" },
        body: msgs(),
        status: 400,
        code: "invalid_request",
        env: "anthropic",
        param: "anthropic-version",
      },
      {
        name: "broken JSON",
        path: "/v1/chat/completions",
        headers: G,
        body: '{"model": "k3",',
        status: 400,
        code: "invalid_json",
        env: "openai",
      },
      {
        name: "invalid UTF-8",
        path: "/v1/chat/completions",
        headers: G,
        body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
        status: 400,
        code: "invalid_json",
        env: "openai",
      },
      {
        name: "empty body",
        path: "/v1/chat/completions",
        headers: G,
        body: "",
        status: 400,
        code: "invalid_json",
        env: "openai",
      },
      {
        name: "JSON array",
        path: "/v1/chat/completions",
        headers: G,
        body: "[]",
        status: 400,
        code: "invalid_body_type",
        env: "openai",
      },
      {
        name: "JSON null",
        path: "/v1/responses",
        headers: G,
        body: "null",
        status: 400,
        code: "invalid_body_type",
        env: "openai",
      },
      {
        name: "JSON number",
        path: "/v1/chat/completions",
        headers: G,
        body: "42",
        status: 400,
        code: "invalid_body_type",
        env: "openai",
      },
      {
        name: "JSON string",
        path: "/v1/messages",
        headers: A,
        body: '"hi"',
        status: 400,
        code: "invalid_body_type",
        env: "anthropic",
      },
      {
        name: "missing model",
        path: "/v1/chat/completions",
        headers: G,
        body: JSON.stringify({ messages: [] }),
        status: 400,
        code: "model_required",
        env: "openai",
        param: "model",
      },
      {
        name: "empty model",
        path: "/v1/messages",
        headers: A,
        body: msgs({ model: "" }),
        status: 400,
        code: "model_required",
        env: "anthropic",
        param: "model",
      },
      {
        name: "model not a string",
        path: "/v1/chat/completions",
        headers: G,
        body: chat("k3", { model: 42 }),
        status: 400,
        code: "invalid_request",
        env: "openai",
        param: "model",
      },
      {
        name: "missing messages (chat)",
        path: "/v1/chat/completions",
        headers: G,
        body: JSON.stringify({ model: "k3" }),
        status: 400,
        code: "messages_required",
        env: "openai",
        param: "messages",
      },
      {
        name: "missing messages (messages)",
        path: "/v1/messages",
        headers: A,
        body: JSON.stringify({ model: "beta-haiku-4-5", max_tokens: 5 }),
        status: 400,
        code: "messages_required",
        env: "anthropic",
        param: "messages",
      },
      {
        name: "unknown model",
        path: "/v1/chat/completions",
        headers: G,
        body: chat("gpt-4o"),
        status: 404,
        code: "model_not_found",
        env: "openai",
        param: "model",
      },
      {
        name: "model with case change",
        path: "/v1/messages",
        headers: A,
        body: msgs({ model: "Beta-Haiku-4-5" }),
        status: 404,
        code: "model_not_found",
        env: "anthropic",
        param: "model",
      },
      {
        name: "alpha model on theta path",
        path: "/theta/v1/chat/completions",
        headers: G,
        body: chat("k3"),
        status: 404,
        code: "model_not_found",
        env: "openai",
        param: "model",
      },
      {
        name: "messages not an array",
        path: "/v1/chat/completions",
        headers: G,
        body: chat("k3", { messages: "hi" }),
        status: 400,
        code: "invalid_request",
        env: "openai",
        param: "messages",
      },
      {
        name: "messages empty",
        path: "/v1/chat/completions",
        headers: G,
        body: chat("k3", { messages: [] }),
        status: 400,
        code: "invalid_request",
        env: "openai",
        param: "messages",
      },
      {
        name: "negative max_tokens",
        path: "/v1/chat/completions",
        headers: G,
        body: chat("k3", { max_tokens: -1 }),
        status: 400,
        code: "invalid_parameter",
        env: "openai",
        param: "max_tokens",
      },
      {
        name: "messages without max_tokens",
        path: "/v1/messages",
        headers: A,
        body: JSON.stringify({ model: "beta-haiku-4-5", messages: [{ role: "user", content: "x" }] }),
        status: 400,
        code: "invalid_request",
        env: "anthropic",
        param: "max_tokens",
      },
      {
        name: "responses without input",
        path: "/v1/responses",
        headers: G,
        body: JSON.stringify({ model: "gamma-2.5" }),
        status: 400,
        code: "invalid_request",
        env: "openai",
        param: "input",
      },
      {
        name: "context window exceeded",
        path: "/v1/chat/completions",
        headers: G,
        body: chat("k3-256k", { messages: [{ role: "user", content: "я".repeat(800_000) }] }),
        status: 400,
        code: "context_length_exceeded",
        env: "openai",
      },
      {
        name: "unknown content block type (messages)",
        path: "/v1/messages",
        headers: A,
        body: msgs({ messages: [{ role: "user", content: [{ type: "hologram", data: "x" }] }] }),
        status: 400,
        code: "invalid_request",
        env: "anthropic",
        param: "messages.0.content.0.type",
      },
      {
        name: "Anthropic-shaped tool on Chat Completions",
        path: "/v1/chat/completions",
        headers: G,
        body: chat("k3", { tools: [{ name: "f", input_schema: { type: "object" } }] }),
        status: 400,
        code: "invalid_request",
        env: "openai",
        param: "tools.0",
      },
      {
        name: "Chat-shaped tool on Responses",
        path: "/v1/responses",
        headers: G,
        body: JSON.stringify({
          model: "gamma-2.5",
          input: "x",
          tools: [{ type: "function", function: { name: "f", parameters: {} } }],
        }),
        status: 400,
        code: "invalid_request",
        env: "openai",
        param: "tools.0",
      },
      {
        name: "GET on a POST route",
        method: "GET",
        path: "/v1/chat/completions",
        headers: G,
        status: 405,
        code: "method_not_allowed",
        env: "openai",
        allow: "POST",
      },
      {
        name: "POST on models",
        path: "/v1/models",
        headers: G,
        body: "{}",
        status: 405,
        code: "method_not_allowed",
        env: "openai",
        allow: "GET",
      },
      {
        name: "PUT on a file",
        method: "PUT",
        path: "/v1/files/file_x",
        headers: G,
        body: "{}",
        status: 405,
        code: "method_not_allowed",
        env: "detail",
        allow: "GET, DELETE",
      },
      {
        name: "unknown path",
        method: "GET",
        path: "/v2/models",
        headers: G,
        status: 404,
        code: "route_not_found",
        env: "openai",
      },
      {
        name: "unknown messages path",
        path: "/v1/messages/batches",
        headers: A,
        body: "{}",
        status: 404,
        code: "route_not_found",
        env: "anthropic",
      },
      {
        name: "declared body too large",
        path: "/v1/chat/completions",
        headers: G,
        body: "x".repeat(2_100_000),
        status: 413,
        code: "request_body_too_large",
        env: "openai",
      },
      {
        name: "streamed body too large without length",
        path: "/v1/chat/completions",
        headers: G,
        body: () =>
          new ReadableStream({
            start(c) {
              for (let i = 0; i < 30; i++) c.enqueue(new Uint8Array(100_000).fill(0x20));
              c.close();
            },
          }),
        status: 413,
        code: "request_body_too_large",
        env: "openai",
      },
      {
        name: "files without key",
        method: "GET",
        path: "/v1/files",
        status: 401,
        code: "missing_api_key",
        env: "auth-openai",
      },
      {
        name: "admin without token",
        path: "/admin/keys",
        body: "{}",
        status: 401,
        code: "admin_unauthorized",
        env: "openai",
      },
    ];
    assert.ok(rows.length >= 40);

    for (const row of rows) {
      const body = typeof row.body === "function" ? row.body() : row.body;
      const res = await fetch(t.url + row.path, {
        method: row.method ?? "POST",
        headers: { "content-type": "application/json", ...row.headers },
        ...(body === undefined ? {} : { body }),
        ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
      } as RequestInit);
      const json = await res.json();
      const rid = res.headers.get("request-id");
      const where = `${row.name}: ${JSON.stringify(json)}`;
      assert.equal(res.status, row.status, where);
      assert.match(rid ?? "", /^req_[A-Za-z0-9]+$/, where);
      assert.equal(json.request_id, rid, where);
      const err = row.env === "detail" ? json.detail?.error : json.error;
      assert.ok(err, where);
      assert.equal(err.code, row.code, where);
      assert.equal(err.request_id, rid, where);
      assert.ok(err.message.endsWith(`[${row.code} · ${rid}]`), where);
      assert.match(err.message, /[а-яА-Я]/, where);
      assert.equal(typeof err.action, "string", where);
      assert.ok(err.action.length > 0, where);
      assert.equal(typeof err.type, "string", where);
      if (row.param !== undefined) assert.equal(err.param, row.param, where);
      if (row.env === "anthropic" || row.env === "auth-anthropic") assert.equal(json.type, "error", where);
      else assert.equal(json.type, undefined, where);
      if (row.env.startsWith("auth")) assert.deepEqual(json.detail?.error, err, where);
      if (row.env === "detail") assert.equal(json.error, undefined, where);
      if (row.env === "openai" || row.env === "anthropic") assert.equal(json.detail, undefined, where);
      if (row.retryAfter) assert.match(res.headers.get("retry-after") ?? "", /^\d+$/, where);
      if (row.allow) assert.equal(res.headers.get("allow"), row.allow, where);
    }

    // Nothing was written: no holds, no spend, balances as created.
    for (const k of [good, revoked, expired, suspended, paused, empty, poor]) {
      const { json } = await t.admin("GET", `/admin/keys/${k.id}`);
      assert.equal(json.held_usd, "0.00");
      assert.equal(json.spent_usd, "0.00");
    }
    const { json: g } = await t.admin("GET", `/admin/keys/${good.id}`);
    assert.equal(g.balance_usd, "10.00");
  } finally {
    await t.close();
  }
});
