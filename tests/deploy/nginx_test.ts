/**
 * deploy/nginx/gateway.conf in front of a real gateway (docs/deploy/reverse-proxy.md): Debian's nginx on
 * loopback with the repository's test certificate, the gateway with TRUSTED_PROXIES=127.0.0.1/32 as the guide sets it.
 * Streams pass frame by frame, the gateway sees each client's own address (its per-address limit counts them
 * apart), the dashboard's cookie is Secure over https, bodies over the limit get the gateway's 413 (nginx's
 * own only far above it), clients negotiate HTTP/2, plain HTTP redirects, and the webhook and operator paths
 * reach the gateway.
 */
import assert from "node:assert/strict";
import https from "node:https";
import { toolTest } from "../support/ci.ts";
import { DashboardClient } from "../support/dashboard_client.ts";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../support/harness.ts";
import { assertEnvelope } from "../support/raw_http.ts";
import { assertFirstFrameBeforeLast, heldStreamUpstream } from "./held_stream.ts";
import { NGINX, type Nginx, startNginx } from "./nginx_process.ts";
import { assertSecureSignIn } from "./secure_sign_in.ts";

const TOOLS = [NGINX];

/** A test gateway (`env` added) behind nginx (`bodyLimit`: its client_max_body_size); both closed after `fn`. */
async function withNginx(
  env: Record<string, string>,
  opts: { bodyLimit?: string },
  fn: (t: TestGateway, nginx: Nginx) => Promise<void>,
): Promise<void> {
  const t = await startTestGateway({ TRUSTED_PROXIES: "127.0.0.1/32", ...env });
  try {
    const nginx = await startNginx(`127.0.0.1:${t.gw.port}`, opts);
    try {
      await fn(t, nginx);
    } finally {
      await nginx.close();
    }
  } finally {
    await t.close();
  }
}

/** GET `path` through nginx from the local address `from` (127.0.0.2, …), over HTTP/1.1. */
function getFrom(
  nginx: Nginx,
  from: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: "127.0.0.1", port: nginx.httpsPort, path, localAddress: from, ca: nginx.ca, headers },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => body += c);
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${path} from ${from}: no answer in 10 s`)));
    req.on("error", reject);
    req.end();
  });
}

toolTest(
  "nginx: a stream's first frame reaches the client before the upstream writes its last",
  TOOLS,
  async () => {
    const upstream = heldStreamUpstream();
    try {
      await withNginx({ ALPHA_UPSTREAM_URL: upstream.url }, {}, async (t, nginx) => {
        const { key } = await t.newKey("5.00");
        await assertFirstFrameBeforeLast(nginx.base, key, upstream, nginx.client);
      });
    } finally {
      await upstream.close();
    }
  },
);

toolTest(
  "nginx: the gateway limits each client address apart, whatever X-Forwarded-For it sends",
  TOOLS,
  async () => {
    // One request per address, then a wait of 1000 s: a second request from the same address is refused.
    const env = { IP_RATE_LIMIT_RPS: "0.001", IP_RATE_LIMIT_BURST: "1" };
    await withNginx(env, {}, async (t, nginx) => {
      const { key } = await t.newKey("1.00");
      const auth = { authorization: `Bearer ${key}` };
      const models = (from: string, headers: Record<string, string> = {}) =>
        getFrom(nginx, from, "/v1/models", { ...auth, ...headers });
      assert.equal((await models("127.0.0.2")).status, 200);
      const again = await models("127.0.0.2");
      assert.equal(again.status, 429, again.body);
      assert.equal(JSON.parse(again.body).error.code, "client_ip_rate_limit");
      // Another address has its own bucket, even naming the first one (nginx appends the real peer).
      assert.equal((await models("127.0.0.3", { "x-forwarded-for": "127.0.0.2" })).status, 200);
      // Naming a fresh address gets no fresh bucket: the address is the one nginx saw.
      const forged = await models("127.0.0.3", { "x-forwarded-for": "10.9.9.9" });
      assert.equal(forged.status, 429, forged.body);
    });
  },
);

toolTest("nginx: the dashboard's cookies are Secure when signing in over https", TOOLS, async () => {
  await withNginx({}, {}, async (t, nginx) => {
    const { key } = await t.newKey("1.00");
    await assertSecureSignIn(nginx.base, key, nginx.client);
    // The same sign-in page straight from the gateway over plain HTTP: no Secure (it is nginx's https).
    const direct = await new DashboardClient(t.url).get("/dashboard");
    assert.equal(direct.setCookies.length, 1);
    assert.doesNotMatch(direct.setCookies[0]!, /Secure/);
  });
});

toolTest(
  "nginx: a body over the gateway's limit gets its 413 JSON error, nginx's own 413 only above its cap",
  TOOLS,
  async () => {
    // The gateway takes 1 KiB, nginx 2 KiB: the guide's rule (nginx's cap a little above BODY_LIMIT_BYTES).
    await withNginx({ BODY_LIMIT_BYTES: "1024" }, { bodyLimit: "2k" }, async (t, nginx) => {
      const { key } = await t.newKey("1.00");
      const chat = (bytes: number, stream = false) => {
        const body = JSON.stringify({
          model: "k3",
          max_tokens: 5,
          messages: [{ role: "user", content: "" }],
        });
        const padded = body.replace('"content":""', `"content":"${"x".repeat(bytes - body.length)}"`);
        assert.equal(padded.length, bytes);
        return fetch(`${nginx.base}/v1/chat/completions`, {
          method: "POST",
          client: nginx.client,
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          // A stream body has no Content-Length: the gateway counts it as nginx passes it on.
          body: stream ? ReadableStream.from([new TextEncoder().encode(padded)]) : padded,
        });
      };
      const fits = await chat(1024);
      assert.equal(fits.status, 200, await fits.clone().text());
      assert.equal((await fits.json()).object, "chat.completion");
      for (const stream of [false, true]) {
        const over = await chat(1500, stream);
        assertEnvelope(
          { status: over.status, headers: over.headers, body: await over.text() },
          413,
          "request_body_too_large",
          "openai",
        );
      }
      const huge = await chat(3000);
      assert.equal(huge.status, 413);
      assert.match(huge.headers.get("content-type") ?? "", /^text\/html/);
      assert.match(await huge.text(), /413 Request Entity Too Large/);
    });
  },
);

toolTest(
  "nginx: HTTP/2 negotiated, plain HTTP redirected, the webhook and operator paths passed",
  TOOLS,
  async () => {
    await withNginx({}, {}, async (_t, nginx) => {
      const tls = await Deno.connectTls({
        hostname: "127.0.0.1",
        port: nginx.httpsPort,
        caCerts: [nginx.ca],
        alpnProtocols: ["h2", "http/1.1"],
      });
      try {
        assert.equal((await tls.handshake()).alpnProtocol, "h2");
      } finally {
        tls.close();
      }

      const plain = await fetch(`http://127.0.0.1:${nginx.httpPort}/v1/models?x=1`, { redirect: "manual" });
      await plain.body?.cancel();
      assert.equal(plain.status, 301);
      assert.equal(plain.headers.get("location"), "https://127.0.0.1/v1/models?x=1");

      // The webhook path reaches the gateway: its own answer (no bot configured here), not nginx's.
      const hook = await fetch(`${nginx.base}/telegram/some-hook`, {
        method: "POST",
        client: nginx.client,
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      assert.match(
        hook.headers.get("request-id") ?? "",
        /^req_/,
        `${hook.status} ${await hook.clone().text()}`,
      );
      await hook.body?.cancel();
      const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const metrics = await fetch(`${nginx.base}/metrics`, { client: nginx.client, headers: auth });
      assert.equal(metrics.status, 200);
      assert.match(await metrics.text(), /^# (HELP|TYPE) /m);
      const tariff = await fetch(`${nginx.base}/admin/tariff`, { client: nginx.client, headers: auth });
      assert.equal(tariff.status, 200);
      await tariff.body?.cancel();
      const noToken = await fetch(`${nginx.base}/admin/tariff`, { client: nginx.client });
      assert.equal(noToken.status, 401);
      await noToken.body?.cancel();
    });
  },
);
