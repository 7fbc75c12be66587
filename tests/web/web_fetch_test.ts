/**
 * The full fetch path on loopback: fetchPage() with only the resolver, the address policy, the port
 * set and (for https) an extra trusted test CA injected. Everything else — URL rules, resolution
 * check, pinned connect, TLS name verification, redirects, size cut-off, timeouts, conversion — is
 * the production code. `test.example.com` exists only in the fake resolver: the system resolver is
 * never asked, so a request that reaches the test server proves the connection used the checked IP.
 */
import assert from "node:assert/strict";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { errorHeaders } from "../../src/errors/render.ts";
import { type FetchDeps, fetchPage, PRODUCTION_FETCH } from "../../src/web/fetch_service.ts";
import { DocumentExtraction } from "../../src/documents/mod.ts";
import type { FetchStats } from "../../src/web/pinned_fetch.ts";
import type { Resolver } from "../../src/web/resolve_guard.ts";

/** Test-only PKI (generated once with openssl, valid 100 years): a CA and a leaf for test.example.com. */
const TEST_CA = `-----BEGIN CERTIFICATE-----
MIIBtjCCAVugAwIBAgIUXiYqe7HUCcvxOaujCq66FDe2jfowCgYIKoZIzj0EAwIw
JzElMCMGA1UEAwwcR2F0ZXdheSBUZXN0IENBICh0ZXN0cyBvbmx5KTAgFw0yNjEx
MjIxMzAzMzFaGA8yMTI2MTAyOTEzMDMzMVowJzElMCMGA1UEAwwcR2F0ZXdheSBU
ZXN0IENBICh0ZXN0cyBvbmx5KTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABOmP
UuqU8Rg1szzdBxGFvwEE7/wvnNLSr2AOyryREyiQBiRDzTCqqZk3XI9lni5iDjSz
sSupLwZnswhwxXu+NUOjYzBhMB0GA1UdDgQWBBSU/BXnCvNic/lKsKhIhVPXgPIq
hjAfBgNVHSMEGDAWgBSU/BXnCvNic/lKsKhIhVPXgPIqhjAPBgNVHRMBAf8EBTAD
AQH/MA4GA1UdDwEB/wQEAwICBDAKBggqhkjOPQQDAgNJADBGAiEAkI7y/rMshcVv
JAZglO5jsmeuSSVXrmU/9h4mMaUk6OsCIQDA3lMrDNSlS+/Kj6rhFI7tSMJXvMrp
C40QwW0kqEobTA==
-----END CERTIFICATE-----
`;
const TEST_LEAF_CERT = `-----BEGIN CERTIFICATE-----
MIIB1DCCAXqgAwIBAgIUD10TrxGRCv5wh46aMciy7F2xkowwCgYIKoZIzj0EAwIw
JzElMCMGA1UEAwwcR2F0ZXdheSBUZXN0IENBICh0ZXN0cyBvbmx5KTAgFw0yNjEx
MjIxMzAzMzFaGA8yMTI2MTAyOTEzMDMzMVowGzEZMBcGA1UEAwwQdGVzdC5leGFt
cGxlLmNvbTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABJVEgSbsfoSePrmp+vE4
fQZI+hsDCj6kHqSeYhN00gTtWaxqmBTWA2jHucyCnTlTQqWKFKu2vshFnbGnycfQ
tUCjgY0wgYowGwYDVR0RBBQwEoIQdGVzdC5leGFtcGxlLmNvbTAJBgNVHRMEAjAA
MBMGA1UdJQQMMAoGCCsGAQUFBwMBMAsGA1UdDwQEAwIHgDAdBgNVHQ4EFgQUPkoO
GGEDgI5AaGnzDH68VSGVvzowHwYDVR0jBBgwFoAUlPwV5wrzYnP5SrCoSIVT14Dy
KoYwCgYIKoZIzj0EAwIDSAAwRQIhAL/0a7yxMD0Znvm7Y4wuayePaKMyjbdMOL7n
QrlIRMSwAiB+/Fc0ADx3Fi7H7ur3T+pVyEgGYhmucIH3TsHpz+O1Lw==
-----END CERTIFICATE-----
`;
const TEST_LEAF_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgAFTV4lOB2QoBOpsO
ZatlXWhsj710NFgw5BeVSVhS+dihRANCAASVRIEm7H6Enj65qfrxOH0GSPobAwo+
pB6knmITdNIE7VmsapgU1gNox7nMgp05U0KlihSrtr7IRZ2xp8nH0LVA
-----END PRIVATE KEY-----
`;

const MiB = 1024 * 1024;

/** A two-page PDF made with pdf-lib (standard fonts are Latin-only). */
const pdfBytes: Uint8Array<ArrayBuffer> = await (async () => {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const text of ["First page of the fetched PDF", "Second page"]) {
    doc.addPage([300, 200]).drawText(text, { x: 20, y: 100, size: 12, font });
  }
  return new Uint8Array(await doc.save());
})();
const LOOPBACK_ONLY = (ip: string) => ip === "127.0.0.1";
/** The page fetch's PDFs go through a document extraction, as the gateway's app.documents. */
const documents = new DocumentExtraction();

interface Seen {
  path: string;
  host: string | null;
}

interface Harness {
  deps: FetchDeps;
  stats: FetchStats;
  /** Every resolver call, "name type". */
  lookups: string[];
  seen: Seen[];
  port: number;
  tlsPort: number;
  base: string;
  /** Bytes the /big stream managed to hand to the socket, and whether it was cancelled. */
  big: { sent: number; cancelled: boolean };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pageServer(seen: Seen[], big: Harness["big"], port: () => number, hold: AbortSignal) {
  return (req: Request): Response | Promise<Response> => {
    const u = new URL(req.url);
    seen.push({ path: u.pathname, host: req.headers.get("host") });
    const p = port();
    switch (u.pathname) {
      case "/page":
        return new Response(
          `<!doctype html><html><head><title>Тестовая страница</title><style>body{color:red}</style>
          <script>alert("x")</script></head><body><nav><a href="/menu">Меню</a></nav>
          <main><h1>Заголовок</h1><p>Текст с <a href="/rel?a=1">ссылкой</a> и
          <a href="https://example.org/abs">внешней</a>, <a href="javascript:alert(1)">скрипт</a>.</p>
          <ul><li>один</li><li>два</li></ul><script>document.write("no")</script>
          <noscript>nojs</noscript><iframe src="/frame"></iframe></main><footer>подвал</footer></body></html>`,
          { headers: { "content-type": "text/html; charset=utf-8" } },
        );
      case "/cp1251":
        return new Response(new Uint8Array([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]), {
          headers: { "content-type": "text/plain; charset=windows-1251" },
        });
      case "/text":
        return new Response("просто *текст*\n<b>не html</b>\n", {
          headers: { "content-type": "text/plain" },
        });
      case "/gzip": {
        const body = new Blob(["<p>сжатая <b>страница</b></p>"]).stream().pipeThrough(
          new CompressionStream("gzip"),
        );
        return new Response(body, { headers: { "content-type": "text/html", "content-encoding": "gzip" } });
      }
      case "/pdf":
        return new Response(pdfBytes, { headers: { "content-type": "application/pdf" } });
      case "/broken-pdf":
        return new Response("%PDF-1.4\nnot really", { headers: { "content-type": "application/pdf" } });
      case "/png":
        return new Response(new Uint8Array([0x89, 0x50]), { headers: { "content-type": "image/png" } });
      case "/missing":
        return new Response("nope", { status: 404 });
      case "/rel-redirect":
        return new Response(null, { status: 302, headers: { location: "/page#frag" } });
      case "/redirect-to-ip":
        return new Response(null, { status: 301, headers: { location: `http://127.0.0.1:${p}/page` } });
      case "/redirect-to-evil":
        return new Response(null, {
          status: 302,
          headers: { location: `http://evil.example.com:${p}/page` },
        });
      case "/redirect-to-file":
        return new Response(null, { status: 302, headers: { location: "file:///etc/passwd" } });
      case "/redirect-to-gopher":
        return new Response(null, {
          status: 307,
          headers: { location: `gopher://test.example.com:${p}/_x` },
        });
      case "/redirect-to-port":
        return new Response(null, {
          status: 308,
          headers: { location: `http://test.example.com:${p + 1}/page` },
        });
      case "/redirect-to-localhost":
        return new Response(null, { status: 303, headers: { location: `http://localhost:${p}/page` } });
      case "/redirect-userinfo":
        return new Response(null, {
          status: 302,
          headers: { location: `http://test.example.com@127.0.0.1:${p}/` },
        });
      case "/no-location":
        return new Response(null, { status: 302 });
      case "/big": {
        // 3 MiB in 64 KiB chunks, paced, so the count shows where the gateway stopped reading.
        let n = 0;
        const chunk = new Uint8Array(64 * 1024).fill(0x61);
        return new Response(
          new ReadableStream<Uint8Array>({
            async pull(c) {
              if (n >= 48) return c.close();
              await sleep(2);
              n++;
              big.sent += chunk.length;
              c.enqueue(chunk);
            },
            cancel() {
              big.cancelled = true;
            },
          }),
          { headers: { "content-type": "text/plain" } },
        );
      }
      case "/big-declared":
        return new Response(
          new ReadableStream<Uint8Array>({
            async pull(c) {
              await sleep(5);
              c.enqueue(new Uint8Array(64 * 1024));
            },
          }),
          { headers: { "content-type": "text/plain", "content-length": String(3 * MiB) } },
        );
      case "/slow-head":
        return sleep(1500).then(() => new Response("late", { headers: { "content-type": "text/plain" } }));
      case "/stall-body":
        return new Response(
          new ReadableStream<Uint8Array>({
            start(c) {
              c.enqueue(new TextEncoder().encode("начало"));
            },
            async pull() {
              await new Promise((r) => hold.addEventListener("abort", r));
            },
          }),
          { headers: { "content-type": "text/plain" } },
        );
    }
    const chain = /^\/chain\/(\d+)$/.exec(u.pathname);
    if (chain) {
      const left = Number(chain[1]);
      if (left === 0) return new Response("конец цепочки", { headers: { "content-type": "text/plain" } });
      return new Response(null, { status: 302, headers: { location: `/chain/${left - 1}` } });
    }
    return new Response("not found", { status: 404 });
  };
}

async function withPages(fn: (h: Harness) => Promise<void>, resolver?: (lookups: string[]) => Resolver) {
  const seen: Seen[] = [];
  const big = { sent: 0, cancelled: false };
  const hold = new AbortController();
  let port = 0;
  const handler = pageServer(seen, big, () => port, hold.signal);
  const plain = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  port = (plain.addr as Deno.NetAddr).port;
  const tls = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: TEST_LEAF_CERT, key: TEST_LEAF_KEY, onListen() {} },
    handler,
  );
  const tlsPort = (tls.addr as Deno.NetAddr).port;
  const lookups: string[] = [];
  const table: Record<string, string> = {
    "test.example.com": "127.0.0.1",
    "other.example.com": "127.0.0.1",
    "evil.example.com": "10.0.0.1",
  };
  const fake: Resolver = resolver?.(lookups) ?? ((name, type) => {
    lookups.push(`${name} ${type}`);
    const ip = table[name];
    return Promise.resolve(type === "A" && ip ? [ip] : []);
  });
  const stats: FetchStats = { connectedTo: [], wireBytes: 0 };
  const deps: FetchDeps = {
    ...PRODUCTION_FETCH,
    resolver: fake,
    policy: LOOPBACK_ONLY,
    ports: new Set([port, tlsPort]),
    caCerts: [TEST_CA],
    stats,
    documents,
  };
  try {
    await fn({ deps, stats, lookups, seen, port, tlsPort, base: `http://test.example.com:${port}`, big });
  } finally {
    hold.abort();
    await plain.shutdown();
    await tls.shutdown();
  }
}

async function failure(
  p: Promise<unknown>,
): Promise<{ status: number; code: string; detail?: string; err: any }> {
  try {
    await p;
  } catch (err: any) {
    return { status: err.status, code: err.code, detail: err.detail, err };
  }
  throw new Error("expected a failure");
}

Deno.test("fetch: HTML page → clean Markdown via the checked address, Host header is the name", () =>
  withPages(async (h) => {
    const r = await fetchPage(`${h.base}/page`, h.deps);
    assert.equal(r.content_type, "text/markdown; charset=utf-8");
    assert.equal(r.truncated, false);
    assert.match(r.content, /^# Заголовок/m);
    assert.ok(r.content.includes(`[ссылкой](http://test.example.com:${h.port}/rel?a=1)`), r.content);
    assert.ok(r.content.includes("[внешней](https://example.org/abs)"));
    assert.ok(r.content.includes("- один"));
    assert.ok(!r.content.includes("alert"), "scripts dropped");
    assert.ok(!r.content.includes("color:red"), "styles dropped");
    assert.ok(!r.content.includes("nojs") && !r.content.includes("Меню") && !r.content.includes("подвал"));
    assert.ok(r.content.includes("скрипт") && !r.content.includes("javascript:"));
    assert.deepEqual(h.seen, [{ path: "/page", host: `test.example.com:${h.port}` }]);
    assert.deepEqual(h.stats.connectedTo, ["127.0.0.1"]);
    assert.deepEqual(h.lookups.sort(), ["test.example.com A", "test.example.com AAAA"]);
  }));

Deno.test("fetch: text/plain as is, charset honoured, gzip decoded, PDF via the files extractor; images → 415; 404 → 502", () =>
  withPages(async (h) => {
    assert.equal((await fetchPage(`${h.base}/text`, h.deps)).content, "просто *текст*\n<b>не html</b>\n");
    assert.equal((await fetchPage(`${h.base}/cp1251`, h.deps)).content, "Привет");
    assert.equal((await fetchPage(`${h.base}/gzip`, h.deps)).content, "сжатая **страница**");
    const pdf = await fetchPage(`${h.base}/pdf`, h.deps);
    assert.equal(pdf.content, "First page of the fetched PDF\n\nSecond page");
    for (const path of ["/broken-pdf", "/png"]) {
      const f = await failure(fetchPage(`${h.base}${path}`, h.deps));
      assert.equal(`${f.status} ${f.code}`, "415 managed_service_unsupported_content", path);
    }
    const missing = await failure(fetchPage(`${h.base}/missing`, h.deps));
    assert.equal(`${missing.status} ${missing.code}`, "502 managed_service_fetch_failed");
  }));

Deno.test("fetch: pinning — one resolution per hop; a changed (rebinding) answer is never used", async () => {
  let calls = 0;
  await withPages(async (h) => {
    const r = await fetchPage(`${h.base}/text`, h.deps);
    assert.ok(r.content.startsWith("просто"));
    assert.deepEqual(h.lookups.sort(), ["test.example.com A", "test.example.com AAAA"]);
    assert.deepEqual(h.stats.connectedTo, ["127.0.0.1"]);
    // The next hop (a redirect to the same name) resolves again and now gets 10.0.0.1: refused.
    const f = await failure(fetchPage(`${h.base}/rel-redirect`, h.deps));
    assert.equal(`${f.status} ${f.code}`, "400 managed_service_destination_rejected");
    assert.deepEqual(h.seen.map((s) => s.path), ["/text", "/rel-redirect"]);
    assert.deepEqual(h.stats.connectedTo, ["127.0.0.1", "127.0.0.1"]);
  }, (lookups) => (name, type) => {
    lookups.push(`${name} ${type}`);
    if (type === "AAAA") return Promise.resolve([]);
    return Promise.resolve([++calls === 1 || calls === 2 ? "127.0.0.1" : "10.0.0.1"]);
  });
});

Deno.test("fetch: redirects are followed manually and every hop is re-checked", () =>
  withPages(async (h) => {
    const ok = await fetchPage(`${h.base}/rel-redirect`, h.deps);
    assert.match(ok.content, /Заголовок/);
    assert.deepEqual(h.seen.map((s) => s.path), ["/rel-redirect", "/page"]);
    for (
      const path of [
        "/redirect-to-ip",
        "/redirect-to-evil",
        "/redirect-to-file",
        "/redirect-to-gopher",
        "/redirect-to-port",
        "/redirect-to-localhost",
        "/redirect-userinfo",
      ]
    ) {
      h.seen.length = 0;
      const f = await failure(fetchPage(`${h.base}${path}`, h.deps));
      assert.equal(`${f.status} ${f.code}`, "400 managed_service_destination_rejected", path);
      assert.match(f.detail!, /^redirect: /, path);
      assert.deepEqual(h.seen.map((s) => s.path), [path], `${path}: the refused target is never contacted`);
    }
    assert.ok(h.lookups.includes("evil.example.com A"), "the redirect target was resolved and checked");
    assert.equal((await fetchPage(`${h.base}/chain/5`, h.deps)).content, "конец цепочки");
    const tooMany = await failure(fetchPage(`${h.base}/chain/6`, h.deps));
    assert.equal(`${tooMany.status} ${tooMany.code}`, "502 managed_service_fetch_failed");
    const noLoc = await failure(fetchPage(`${h.base}/no-location`, h.deps));
    assert.equal(noLoc.code, "managed_service_fetch_failed");
  }));

Deno.test("fetch: a 3 MiB page is cut near 2 MiB → 503 managed_service_unavailable, Retry-After: 1", () =>
  withPages(async (h) => {
    const f = await failure(fetchPage(`${h.base}/big`, h.deps));
    assert.equal(`${f.status} ${f.code}`, "503 managed_service_unavailable");
    assert.equal(errorHeaders(f.err)["retry-after"], "1");
    assert.ok(h.stats.wireBytes > 2 * MiB, `read ${h.stats.wireBytes}`);
    assert.ok(h.stats.wireBytes < 2 * MiB + 512 * 1024, `read ${h.stats.wireBytes}`);
    await sleep(300);
    assert.ok(h.big.sent < 3 * MiB, `server sent ${h.big.sent} bytes before the gateway hung up`);
    assert.equal(h.big.cancelled, true, "the server saw the download aborted");
  }));

Deno.test("fetch: a declared Content-Length over 2 MiB is refused before the body is read", () =>
  withPages(async (h) => {
    const f = await failure(fetchPage(`${h.base}/big-declared`, h.deps));
    assert.equal(`${f.status} ${f.code}`, "503 managed_service_unavailable");
    assert.ok(h.stats.wireBytes < 256 * 1024, `read ${h.stats.wireBytes}`);
  }));

Deno.test("fetch: first-byte and total timeouts → 504 managed_service_timeout", () =>
  withPages(async (h) => {
    const t0 = Date.now();
    const head = await failure(fetchPage(`${h.base}/slow-head`, { ...h.deps, firstByteTimeoutMs: 200 }));
    assert.equal(`${head.status} ${head.code}`, "504 managed_service_timeout");
    assert.match(head.detail!, /first byte/);
    assert.ok(Date.now() - t0 < 1200);
    const t1 = Date.now();
    const body = await failure(fetchPage(`${h.base}/stall-body`, { ...h.deps, totalTimeoutMs: 300 }));
    assert.equal(`${body.status} ${body.code}`, "504 managed_service_timeout");
    assert.match(body.detail!, /total/);
    assert.ok(Date.now() - t1 < 1200);
    await sleep(1500); // let the slow handler finish before the server shuts down
  }));

Deno.test("fetch: https is pinned too and the certificate is verified against the URL's host name", () =>
  withPages(async (h) => {
    const ok = await fetchPage(`https://test.example.com:${h.tlsPort}/text`, h.deps);
    assert.ok(ok.content.startsWith("просто"));
    assert.deepEqual(h.seen.at(-1), { path: "/text", host: `test.example.com:${h.tlsPort}` });
    assert.deepEqual(h.stats.connectedTo, ["127.0.0.1"]);
    // Same address, another name: the certificate (for test.example.com) does not match.
    const wrongName = await failure(fetchPage(`https://other.example.com:${h.tlsPort}/text`, h.deps));
    assert.equal(`${wrongName.status} ${wrongName.code}`, "502 managed_service_fetch_failed");
    assert.match(wrongName.detail!, /not valid for name|other\.example\.com/);
    // Without the test CA the chain is not trusted: verification is on by default.
    const { caCerts: _, ...noCa } = h.deps;
    const untrusted = await failure(fetchPage(`https://test.example.com:${h.tlsPort}/text`, noCa));
    assert.equal(untrusted.code, "managed_service_fetch_failed");
    assert.match(untrusted.detail!, /UnknownIssuer|certificate/i);
    assert.deepEqual(h.seen.map((s) => s.path), ["/text"], "nothing was sent over an unverified connection");
  }));

/** One connection on loopback answered with `answer`'s bytes as they are, then closed; the request as read. */
async function rawPage(answer: string, path: string) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  let request = "";
  const served = (async () => {
    const conn = await listener.accept();
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    request = new TextDecoder().decode(buf.subarray(0, n ?? 0));
    await conn.write(new TextEncoder().encode(answer));
    conn.close();
  })();
  try {
    const page = await fetchPage(`http://test.example.com:${port}${path}`, {
      ...PRODUCTION_FETCH,
      resolver: (_n, t) => Promise.resolve(t === "A" ? ["127.0.0.1"] : []),
      policy: LOOPBACK_ONLY,
      ports: new Set([port]),
    }).then((r) => ({ r, err: undefined }), (err: { code?: string }) => ({ r: undefined, err }));
    return { ...page, request };
  } finally {
    await served;
    listener.close();
  }
}

const TEXT_HEAD = "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n";
const MARKDOWN = "text/markdown; charset=utf-8";

Deno.test("fetch: a body cut short by the server → truncated: true", async () => {
  const { r, request } = await rawPage(`${TEXT_HEAD}content-length: 1000\r\n\r\nначало`, "/cut");
  assert.deepEqual(r, { content: "начало", content_type: MARKDOWN, truncated: true });
  assert.match(request, /^GET \/cut HTTP\/1\.1\r\nHost: test\.example\.com:\d+\r\n/);
  assert.match(request, /\r\nConnection: close\r\n/);
});

Deno.test("fetch: a chunked page (extensions, trailers) is read whole; one cut mid-chunk is truncated", async () => {
  // Sizes count bytes: "начало" is 12 of UTF-8, " конец" 11.
  const chunked = `${TEXT_HEAD}transfer-encoding: chunked\r\n\r\n`;
  const whole = await rawPage(
    `${chunked}c;ext=1\r\nначало\r\nb\r\n конец\r\n0\r\nx-trailer: t\r\n\r\n`,
    "/c",
  );
  assert.deepEqual(whole.r, { content: "начало конец", content_type: MARKDOWN, truncated: false });
  const cut = await rawPage(`${chunked}c\r\nначало\r\n20\r\n конец`, "/c");
  assert.deepEqual(cut.r, { content: "начало конец", content_type: MARKDOWN, truncated: true });
  // A server that ends after the last chunk without the trailers' blank line: every byte there, not complete.
  const noEnd = await rawPage(`${chunked}c\r\nначало\r\n0\r\n`, "/c");
  assert.deepEqual(noEnd.r, { content: "начало", content_type: MARKDOWN, truncated: true });
});

Deno.test("fetch: broken chunked framing → managed_service_fetch_failed", async () => {
  for (const body of ["zz\r\nabc\r\n0\r\n\r\n", "3\r\nabcXY0\r\n\r\n", "1234567890abcd\r\n"]) {
    const { err } = await rawPage(`${TEXT_HEAD}transfer-encoding: chunked\r\n\r\n${body}`, "/bad");
    assert.equal(
      (err as { code?: string } | undefined)?.code,
      "managed_service_fetch_failed",
      JSON.stringify(body),
    );
  }
});

Deno.test("why not createHttpClient({proxy: tcp}): Deno 2.9 sends cleartext HTTP even for https URLs", async () => {
  let plaintextSeen = false;
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const accepted = (async () => {
    const conn = await listener.accept();
    const buf = new Uint8Array(1024);
    const n = await conn.read(buf);
    plaintextSeen = new TextDecoder().decode(buf.subarray(0, n ?? 0)).startsWith(
      "GET https://test.example.com/secret HTTP/1.1",
    );
    conn.close();
  })();
  const client = Deno.createHttpClient({ proxy: { transport: "tcp", hostname: "127.0.0.1", port } });
  try {
    await fetch("https://test.example.com/secret", { client }).then((r) => r.body?.cancel(), () => {});
    await accepted;
    // If a future Deno starts TLS here, this documents that the proxy option could replace pinned_fetch.ts.
    assert.equal(plaintextSeen, true);
  } finally {
    client.close();
    listener.close();
  }
});
