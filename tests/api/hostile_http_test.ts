/**
 * Hostile requests at the HTTP level, over raw TCP to 127.0.0.1: broken chunked framing and cut bodies,
 * oversized and unfinished heads, idle connections and the connection deadlines, a key with non-HTTP
 * whitespace around it, a UTF-8 BOM before the body, a missing Host (RFC 9112 §3.2). Every loop is bounded in
 * count and time, every socket is loopback.
 */
import assert from "node:assert/strict";
import { type Simulator, startSimulator } from "../../sim/server.ts";
import { parseConfig } from "../../src/config/env.ts";
import { startGateway } from "../../src/gateway.ts";
import {
  connectionDeadlinesSupported,
  DEFAULT_CONNECTION_BOUNDS,
  fallbackHostFor,
  serveGateway,
} from "../../src/http/serve.ts";
import { MAX_HEADER_BYTES, MAX_HEADER_FIELDS, MAX_TARGET_BYTES } from "../../src/http/request_head.ts";
import { Logger } from "../../src/util/log.ts";
import { ADMIN_TOKEN, ANTHROPIC_HEADERS, post, withGateway } from "../support/harness.ts";
import { assertEnvelope, head, portOf, rawHttp } from "../support/raw_http.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Body stream failures are the client's: 400, never 500

Deno.test("broken chunked framing and cut bodies answer 400 request_body_unreadable (413 unchanged)", () =>
  withGateway(async (t) => {
    const { id, key } = await t.newKey("1.00");
    const port = portOf(t);
    const chunkedHead = (path: string, extra: string[] = []) =>
      head([
        `POST ${path} HTTP/1.1`,
        "Host: 127.0.0.1",
        `Authorization: Bearer ${key}`,
        "Content-Type: application/json",
        "Transfer-Encoding: chunked",
        ...extra,
      ]);
    const bodies: [string, string][] = [
      ["100,000-character chunk extension", "5;" + "e".repeat(100_000) + '\r\n{"a":\r\n0\r\n\r\n'],
      ["chunk-size overflow", "FFFFFFFFFFFFFFFFFFFFFFFF\r\n{}\r\n0\r\n\r\n"],
      ["chunk size not hex", "zz\r\n{}\r\n0\r\n\r\n"],
    ];
    const surfaces: [string, "openai" | "anthropic" | "detail", string, string[]][] = [
      ["/v1/chat/completions", "openai", "request_body_unreadable", []],
      ["/v1/messages", "anthropic", "request_body_unreadable", ["anthropic-version: 2023-06-01"]],
      ["/v1/responses", "openai", "request_body_unreadable", []],
      ["/v1/messages/count_tokens", "anthropic", "request_body_unreadable", [
        "anthropic-version: 2023-06-01",
      ]],
      ["/v1/alpha/search", "openai", "invalid_managed_service_request", []],
    ];
    for (const [name, body] of bodies) {
      for (const [path, env, code, extra] of surfaces) {
        // The head first, the broken body a moment later: the gateway is already reading it.
        const r = await rawHttp(port, [chunkedHead(path, extra), body], { gapMs: 150 });
        assertEnvelope(r, 400, code, env, null);
        assert.ok(!r.body!.includes("internal_error"), `${name} ${path}`);
      }
    }
    // A chunk size that overflows any integer after data the gateway has already started reading: the head and a
    // valid first chunk in one write (a large one, so Deno hands the request over before the rest), the size
    // later. Whole in one packet, Deno refuses it before any handler runs (the next test).
    const large = "[" + " ".repeat(200_000) + "]";
    const overflows: [string, string][] = [
      [`2\r\n{}\r\n`, "FFFFFFFFFFFFFFFFFFFFFFFF\r\n{}\r\n0\r\n\r\n"],
      [`${large.length.toString(16)}\r\n${large}\r\n`, "100000000000000000000\r\nxx\r\n0\r\n\r\n"],
    ];
    for (const [first, rest] of overflows) {
      for (const [path, env, code, extra] of surfaces) {
        if (first.length > 100_000 && path === "/v1/alpha/search") continue; // over search's own body bound: 413
        const r = await rawHttp(port, [chunkedHead(path, extra) + first, rest], { gapMs: 150 });
        assertEnvelope(r, 400, code, env, null);
      }
    }
    // An upload whose multipart body stream breaks: the same 400 in the files envelope.
    const upload = head([
      "POST /v1/files HTTP/1.1",
      "Host: 127.0.0.1",
      `Authorization: Bearer ${key}`,
      "Content-Type: multipart/form-data; boundary=xyz",
      "Transfer-Encoding: chunked",
    ]);
    const up = await rawHttp(port, [upload, "FFFFFFFFFFFFFFFFFFFFFFFF\r\nxx\r\n"], { gapMs: 150 });
    assertEnvelope(up, 400, "request_body_unreadable", "detail", null);
    // A body shorter than its Content-Length, then the client half-closes: 400 as well.
    const cut = await rawHttp(port, [
      head([
        "POST /v1/chat/completions HTTP/1.1",
        "Host: 127.0.0.1",
        `Authorization: Bearer ${key}`,
        "Content-Length: 100",
      ]),
      '{"model":',
    ], { gapMs: 100, closeWrite: true });
    assertEnvelope(cut, 400, "request_body_unreadable", "openai", null);
    // The size limit keeps its 413, counted on the wire without Content-Length.
    const big = await fetch(t.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 40; i++) c.enqueue(new Uint8Array(100_000).fill(0x20));
          c.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    assert.equal(big.status, 413);
    assert.equal((await big.json()).error.code, "request_body_too_large");
    const acc = await t.admin("GET", `/admin/keys/${id}`);
    assert.equal(acc.json.spent_usd, "0.00");
    assert.equal(acc.json.held_usd, "0.00");
  }, { BODY_LIMIT_BYTES: "2000000" }));

Deno.test("framing broken inside the very first packet is refused by Deno itself (documented)", () =>
  withGateway(async (t) => {
    // Deno pre-reads a body that arrives with its head; a broken one closes the connection before
    // any handler runs (docs/api.md "Errors", HTTP level). Nothing reaches the gateway: no 500 either.
    const r = await rawHttp(portOf(t), [
      head([
        "POST /v1/chat/completions HTTP/1.1",
        "Host: 127.0.0.1",
        "Transfer-Encoding: chunked",
      ]) + "FFFFFFFFFFFFFFFFFFFFFFFF\r\n{}\r\n0\r\n\r\n",
    ], { untilClose: true, timeoutMs: 3_000 });
    assert.equal(r.closed, true);
    assert.equal(r.received, 0);
  }));

// ---------------------------------------------------------------------------------------------
// Oversized heads

Deno.test("heads the gateway sees get 414 / 431 in the §7.1 envelope", () =>
  withGateway(async (t) => {
    const port = portOf(t);
    const base = ["Host: 127.0.0.1", "Connection: close"];
    const longPath = "/v1/chat/completions?x=" + "a".repeat(MAX_TARGET_BYTES);
    assert.ok(longPath.length < 60_000);
    const cases: [string, string, number, string, "openai" | "anthropic" | "detail"][] = [
      ["10 KB path", `POST ${longPath} HTTP/1.1`, 414, "request_uri_too_long", "openai"],
      [
        "10 KB files path",
        `GET /v1/files/file_${"0".repeat(10_000)} HTTP/1.1`,
        414,
        "request_uri_too_long",
        "detail",
      ],
      ["10 KB unknown path", `GET /${"p".repeat(10_000)} HTTP/1.1`, 414, "request_uri_too_long", "openai"],
    ];
    for (const [name, line, status, code, env] of cases) {
      const r = await rawHttp(port, [head([line, ...base])]);
      assertEnvelope(r, status, code, env, null);
      assert.ok(r.status, name);
    }
    const bigValue = head([
      "POST /v1/messages HTTP/1.1",
      ...base,
      `X-Big: ${"v".repeat(MAX_HEADER_BYTES + 8_000)}`,
    ]);
    assertEnvelope(
      await rawHttp(port, [bigValue]),
      431,
      "request_header_fields_too_large",
      "anthropic",
      null,
    );
    const manyHeaders = head([
      "GET /v1/models HTTP/1.1",
      ...base,
      ...Array.from({ length: MAX_HEADER_FIELDS + 10 }, (_, i) => `X-H${i}: v`),
    ]);
    assertEnvelope(
      await rawHttp(port, [manyHeaders]),
      431,
      "request_header_fields_too_large",
      "openai",
      null,
    );
    // Just under the bounds: the request goes on (to authentication here).
    const fine = head([
      "GET /v1/models HTTP/1.1",
      ...base,
      `X-Big: ${"v".repeat(MAX_HEADER_BYTES - 2_000)}`,
      ...Array.from({ length: MAX_HEADER_FIELDS - 10 }, (_, i) => `X-H${i}: v`),
    ]);
    assertEnvelope(await rawHttp(port, [fine]), 401, "missing_api_key", "auth");
  }));

Deno.test("heads Deno refuses before the gateway: bare 400, empty body, closed (documented)", () =>
  withGateway(async (t) => {
    const port = portOf(t);
    const base = ["Host: 127.0.0.1"];
    const cases: [string, string][] = [
      ["100 KB header value", head(["GET /v1/models HTTP/1.1", ...base, `X-Big: ${"v".repeat(100_000)}`])],
      ["1 MB header value", head(["GET /v1/models HTTP/1.1", ...base, `X-Big: ${"v".repeat(1_000_000)}`])],
      [
        "5,000 headers",
        head(["GET /v1/models HTTP/1.1", ...base, ...Array.from({ length: 5_000 }, (_, i) => `X-H${i}: v`)]),
      ],
      ["100 KB path", head([`GET /${"p".repeat(100_000)} HTTP/1.1`, ...base])],
    ];
    for (const [name, raw] of cases) {
      const r = await rawHttp(port, [raw], { untilClose: true, timeoutMs: 5_000 });
      assert.equal(r.status, 400, name);
      assert.equal(r.headers?.get("content-length"), "0", name);
      assert.equal(r.body, "", name);
      assert.equal(r.closed, true, name);
    }
  }));

// ---------------------------------------------------------------------------------------------
// Unfinished heads and idle connections are closed after a bound

async function withShortDeadlines(
  fn: (url: string, port: number, newKey: () => Promise<string>, sim: Simulator) => Promise<void>,
  bounds = { headerTimeoutMs: 400, idleTimeoutMs: 800 },
  env: Record<string, string> = {},
) {
  const sim = await startSimulator();
  const gw = await startGateway(
    parseConfig({
      ...env,
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: "memory",
      LOG_LEVEL: "error",
      ADMIN_TOKEN,
      ALPHA_UPSTREAM_URL: sim.url,
      BETA_UPSTREAM_URL: sim.url,
      DELTA_UPSTREAM_URL: sim.url,
      THETA_UPSTREAM_URL: sim.url,
      THETA_UPSTREAM_KEYS: "k1",
    }),
    { connection: bounds },
  );
  const newKey = async () => {
    const res = await fetch(gw.url + "/admin/keys", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ balance_usd: "1.00" }),
    });
    return (await res.json()).key as string;
  };
  try {
    await fn(gw.url, gw.port, newKey, sim);
  } finally {
    await gw.close();
    await sim.close();
  }
}

Deno.test("connection deadlines: the production bounds are the documented ones, and enforced on this Deno", () => {
  assert.deepEqual({ ...DEFAULT_CONNECTION_BOUNDS }, { headerTimeoutMs: 10_000, idleTimeoutMs: 75_000 });
  assert.equal(connectionDeadlinesSupported(), true);
});

Deno.test("connection deadlines: the fallback without the entry point is plain Deno.serve (same handler contract)", async () => {
  const seen: string[] = [];
  const server = serveGateway(
    { hostname: "127.0.0.1", port: 0, plain: true, log: new Logger("warn") },
    (req, conn) => {
      seen.push(`${new URL(req.url).host} ${conn.fallbackHost}`);
      return Promise.resolve(new Response("ok"));
    },
  );
  try {
    assert.equal(server.deadlines, false);
    const r = await rawHttp(server.addr.port, [head(["GET / HTTP/1.1", "Connection: close"])]);
    assert.equal(r.status, 200);
    const fallback = `localhost:${server.addr.port}`;
    assert.deepEqual(seen, [`${fallback} ${fallback}`]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("connection deadlines: 60 connections that never finish their heads are closed after the header bound", () =>
  withShortDeadlines(async (url, port) => {
    const started = performance.now();
    const partial = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applic";
    // 50 send a partial head once; 10 keep dribbling one byte every 100 ms (slowloris).
    const silent = Array.from(
      { length: 50 },
      () => rawHttp(port, [partial], { untilClose: true, timeoutMs: 4_000 }),
    );
    const dribble = Array.from(
      { length: 10 },
      () =>
        rawHttp(port, [partial, ...Array.from({ length: 30 }, () => "x")], {
          gapMs: 100,
          untilClose: true,
          timeoutMs: 4_000,
        }),
    );
    // Meanwhile an ordinary request is served.
    await sleep(100);
    const ok = await fetch(url + "/v1/models");
    assert.equal(ok.status, 401);
    await ok.body?.cancel();
    const results = await Promise.all([...silent, ...dribble]);
    for (const [i, r] of results.entries()) {
      assert.equal(r.closed, true, `connection ${i} still open after ${Math.round(r.elapsedMs)} ms`);
      assert.equal(r.received, 0, `connection ${i} got bytes`);
      assert.ok(r.elapsedMs >= 300 && r.elapsedMs < 2_500, `connection ${i}: ${Math.round(r.elapsedMs)} ms`);
    }
    assert.ok(performance.now() - started < 4_000);
  }));

Deno.test("connection deadlines: HTTP_CONNECTION_DEADLINES=off serves on plain Deno.serve: heads and idle are the proxy's to bound", () =>
  withShortDeadlines(
    async (url, port) => {
      const partial = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applic";
      // Three times the header bound: still open, nothing sent (the default closes it within the bound).
      const unfinished = rawHttp(port, [partial], { untilClose: true, timeoutMs: 1_200 });
      const ok = await fetch(url + "/v1/models");
      assert.equal(ok.status, 401);
      await ok.body?.cancel();
      const r = await unfinished;
      assert.equal(r.closed, false, `closed after ${Math.round(r.elapsedMs)} ms`);
      assert.equal(r.received, 0);
    },
    { headerTimeoutMs: 400, idleTimeoutMs: 400 },
    { HTTP_CONNECTION_DEADLINES: "off" },
  ));

Deno.test("connection deadlines: an idle keep-alive connection is closed after the idle bound; requests in progress are not cut", () =>
  withShortDeadlines(async (_url, port, newKey) => {
    const key = await newKey();
    // One complete request, then silence: the answer comes, then the close after ~800 ms.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      await conn.write(enc.encode(head(["GET /v1/models HTTP/1.1", "Host: 127.0.0.1"])));
      const buf = new Uint8Array(64 * 1024);
      const t0 = performance.now();
      const n = await conn.read(buf);
      assert.ok(n !== null && dec.decode(buf.subarray(0, n)).startsWith("HTTP/1.1 401"));
      const closeDeadline = setTimeout(() => conn.close(), 4_000);
      const eof = await conn.read(buf).catch(() => null);
      clearTimeout(closeDeadline);
      const idle = performance.now() - t0;
      assert.equal(eof, null);
      assert.ok(idle >= 700 && idle < 2_500, `closed after ${Math.round(idle)} ms`);
    } finally {
      try {
        conn.close();
      } catch { /* closed */ }
    }
    // A body that trickles in over ~1.6 s (longer than both bounds): the request is in progress (the
    // gateway is reading its body), so it is answered, not cut.
    const body = '{"model": "k3", "messages": [}';
    const pieces = Array.from({ length: 5 }, (_, i) => body.slice(i * 6, i === 4 ? undefined : (i + 1) * 6));
    assert.equal(pieces.join(""), body);
    const slow = await rawHttp(port, [
      head([
        "POST /v1/chat/completions HTTP/1.1",
        "Host: 127.0.0.1",
        `Authorization: Bearer ${key}`,
        `Content-Length: ${body.length}`,
      ]),
      ...pieces,
    ], { gapMs: 400, timeoutMs: 6_000 });
    assertEnvelope(slow, 400, "invalid_json", "openai", null);
    assert.ok(slow.elapsedMs >= 1_500, `answered after ${Math.round(slow.elapsedMs)} ms`);
  }));

Deno.test("connection deadlines: the idle bound runs from the end of the connection's last request, not its first", () =>
  withShortDeadlines(async (_url, port) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const buf = new Uint8Array(64 * 1024);
    const ask = async () => {
      await conn.write(enc.encode(head(["GET /v1/models HTTP/1.1", "Host: 127.0.0.1"])));
      const n = await conn.read(buf);
      assert.ok(n !== null && dec.decode(buf.subarray(0, n)).startsWith("HTTP/1.1 401"));
    };
    try {
      await ask();
      // A second request 500 ms later (within the 800 ms idle bound), then silence: counted from the first
      // answer the connection would close ~800 ms after it; it closes ~800 ms after the second.
      await sleep(500);
      await ask();
      const t0 = performance.now();
      const closeDeadline = setTimeout(() => conn.close(), 4_000);
      const eof = await conn.read(buf).catch(() => null);
      clearTimeout(closeDeadline);
      const idle = performance.now() - t0;
      assert.equal(eof, null);
      assert.ok(idle >= 700 && idle < 2_500, `closed ${Math.round(idle)} ms after the second answer`);
    } finally {
      try {
        conn.close();
      } catch { /* closed */ }
    }
  }));

// ---------------------------------------------------------------------------------------------
// The key is matched exactly (no NBSP or other non-HTTP whitespace around it)

Deno.test("a no-break space before or after the key never authenticates (Bearer and x-api-key)", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey("1.00");
    const port = portOf(t);
    const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
    const call = async (headerLine: Uint8Array) => {
      const parts = [
        enc.encode("GET /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\n"),
        headerLine,
        enc.encode("\r\n\r\n"),
      ];
      const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let off = 0;
      for (const p of parts) all.set(p, off), off += p.length;
      return await rawHttp(port, [all]);
    };
    const refused: [string, Uint8Array][] = [
      ["Bearer key NBSP (latin-1 byte)", latin1(`Authorization: Bearer ${key}\u00a0`)],
      ["Bearer NBSP key", latin1(`Authorization: Bearer\u00a0${key}`)],
      ["NBSP Bearer key", latin1(`Authorization: \u00a0Bearer ${key}`)],
      ["Bearer key NBSP (UTF-8)", enc.encode(`Authorization: Bearer ${key}\u00a0`)],
      ["Bearer NBSP key (UTF-8)", enc.encode(`Authorization: Bearer\u00a0${key}`)],
      ["Bearer key NEL", latin1(`Authorization: Bearer ${key}\u0085`)],
      ["Bearer key U+3000", enc.encode(`Authorization: Bearer ${key}\u3000`)],
      ["Bearer key key", latin1(`Authorization: Bearer ${key} ${key}`)],
      ["x-api-key key NBSP", latin1(`x-api-key: ${key}\u00a0`)],
      ["x-api-key NBSP key", latin1(`x-api-key: \u00a0${key}`)],
      ["x-api-key key NBSP (UTF-8)", enc.encode(`x-api-key: ${key}\u00a0`)],
      ["x-api-key key U+FEFF", enc.encode(`x-api-key: ${key}\ufeff`)],
    ];
    for (const [name, line] of refused) {
      const r = await call(line);
      assertEnvelope(r, 401, "invalid_api_key", "auth");
      assert.ok(r.status === 401, name);
    }
    // Spaces and tabs are HTTP whitespace: accepted where the grammar allows them.
    const accepted: [string, Uint8Array][] = [
      ["Bearer key", latin1(`Authorization: Bearer ${key}`)],
      ["Bearer TAB key", latin1(`Authorization: Bearer\t${key}`)],
      ["Bearer spaces key, trailing spaces", latin1(`Authorization:   Bearer   ${key}  \t`)],
      ["scheme case-insensitive", latin1(`Authorization: bearer ${key}`)],
      ["x-api-key with spaces around", latin1(`x-api-key:  ${key} \t`)],
    ];
    for (const [name, line] of accepted) {
      const r = await call(line);
      assert.equal(r.status, 200, `${name}: ${r.body}`);
    }
    // The operator token is matched the same way.
    const adminCall = async (value: string) =>
      await rawHttp(port, [
        new Uint8Array([
          ...enc.encode("GET /admin/tariff HTTP/1.1\r\nHost: 127.0.0.1\r\n"),
          ...latin1(`Authorization: ${value}`),
          ...enc.encode("\r\n\r\n"),
        ]),
      ]);
    assert.equal((await adminCall(`Bearer ${ADMIN_TOKEN}`)).status, 200);
    for (
      const value of [
        `Bearer ${ADMIN_TOKEN}\u00a0`,
        `Bearer\u00a0${ADMIN_TOKEN}`,
        `\u00a0Bearer ${ADMIN_TOKEN}`,
      ]
    ) {
      const r = await adminCall(value);
      assert.equal(r.status, 401, JSON.stringify(value));
      assert.match(r.body ?? "", /admin_unauthorized/);
    }
  }));

// ---------------------------------------------------------------------------------------------
// A UTF-8 BOM is refused (it was dropped when parsing but forwarded raw on the native path)

Deno.test("a body starting with a UTF-8 BOM is 400 invalid_json on every surface and count_tokens", () =>
  withGateway(async (t) => {
    const { id, key } = await t.newKey("1.00");
    const bom = (json: unknown) => new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode(JSON.stringify(json))]);
    const before = t.sim.requests.length;
    const cases: [string, Record<string, string>, unknown, "openai" | "anthropic"][] = [
      ["/v1/chat/completions", {}, { model: "k3", messages: [{ role: "user", content: "hi" }] }, "openai"],
      [
        "/v1/messages",
        ANTHROPIC_HEADERS,
        { model: "beta-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] },
        "anthropic",
      ],
      ["/v1/responses", {}, { model: "gamma-2.5", input: "hi" }, "openai"],
      [
        "/v1/messages/count_tokens",
        ANTHROPIC_HEADERS,
        { model: "beta-haiku-4-5", messages: [{ role: "user", content: "hi" }] },
        "anthropic",
      ],
      [
        "/theta/v1/chat/completions",
        {},
        { model: "theta3.8-max", messages: [{ role: "user", content: "hi" }] },
        "openai",
      ],
    ];
    const postBytes = (path: string, bytes: Uint8Array, headers: Record<string, string> = {}) =>
      fetch(t.url + path, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
        body: bytes as Uint8Array<ArrayBuffer>,
      });
    for (const [path, headers, body, env] of cases) {
      const res = await postBytes(path, bom(body), headers);
      const text = await res.text();
      assertEnvelope(
        { status: res.status, headers: res.headers, body: text },
        400,
        "invalid_json",
        env,
        null,
      );
      assert.match(JSON.parse(text).error.message, /BOM/, path);
      // Without the BOM the same body is fine.
      const plain = await post(t.url + path, key, body, headers);
      assert.equal(plain.status, 200, `${path}: ${await plain.clone().text()}`);
      await plain.body?.cancel();
    }
    assert.equal(t.sim.requests.length - before, cases.length - 1, "BOM bodies never reached the upstream");
    const search = await postBytes("/v1/alpha/search", bom({ query: "x" }));
    assert.equal(search.status, 400);
    assert.equal((await search.json()).error.code, "invalid_managed_service_request");
    const acc = await t.admin("GET", `/admin/keys/${id}`);
    assert.equal(acc.json.held_usd, "0.00");
  }));

// ---------------------------------------------------------------------------------------------
// An HTTP/1.1 request without Host is 400 (RFC 9112 §3.2), before authentication

Deno.test("no Host (or an empty one) is 400 invalid_request, param host, before authentication", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey("1.00");
    const port = portOf(t);
    const cases: [string, string, "openai" | "anthropic" | "detail"][] = [
      ["GET without Host", head(["GET /v1/models HTTP/1.1", "Connection: close"]), "openai"],
      [
        "GET with a valid key, without Host",
        head(["GET /v1/models HTTP/1.1", `Authorization: Bearer ${key}`]),
        "openai",
      ],
      [
        "POST with a body, without Host",
        head(["POST /v1/messages HTTP/1.1", "Content-Length: 2", `x-api-key: ${key}`]) + "{}",
        "anthropic",
      ],
      ["files without Host", head(["GET /v1/files HTTP/1.1", `Authorization: Bearer ${key}`]), "detail"],
      ["empty Host", head(["GET /v1/models HTTP/1.1", "Host:", `Authorization: Bearer ${key}`]), "openai"],
      ["unknown path without Host", head(["GET /nowhere HTTP/1.1"]), "openai"],
      // Deno does not tell the handler the HTTP version: HTTP/1.0 needs a Host here too (README).
      ["HTTP/1.0 without Host", head(["GET /v1/models HTTP/1.0", `Authorization: Bearer ${key}`]), "openai"],
    ];
    for (const [name, raw, env] of cases) {
      const r = await rawHttp(port, [raw]);
      assertEnvelope(r, 400, "invalid_request", env, "host");
      const json = JSON.parse(r.body!);
      assert.match((env === "detail" ? json.detail.error : json.error).message, /Host/, name);
    }
    // With Host the same requests reach authentication and the routes.
    const withHost = await rawHttp(port, [head(["GET /v1/models HTTP/1.1", "Host: gateway.example"])]);
    assertEnvelope(withHost, 401, "missing_api_key", "auth");
    // The fallback authority the check compares with, as Deno computes it from the local address.
    const addr = (hostname: string, port: number) => ({ transport: "tcp" as const, hostname, port });
    assert.equal(fallbackHostFor(addr("127.0.0.1", 8787)), "localhost:8787");
    assert.equal(fallbackHostFor(addr("0.0.0.0", 80)), "localhost");
    assert.equal(fallbackHostFor(addr("10.0.0.5", 8787)), "10.0.0.5:8787");
    assert.equal(fallbackHostFor(addr("10.0.0.5", 80)), "10.0.0.5");
    assert.equal(fallbackHostFor(addr("2001:db8::1", 8787)), "[2001:db8::1]:8787");
    const authed = await rawHttp(port, [
      head(["GET /v1/models HTTP/1.1", "Host: 127.0.0.1", `Authorization: Bearer ${key}`]),
    ]);
    assert.equal(authed.status, 200);
  }));
