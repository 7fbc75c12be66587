/**
 * deploy/caddy/Caddyfile (docs/deploy/reverse-proxy.md): Debian's Caddy accepts it as an operator renders it,
 * a stream passes through it frame by frame to a real gateway, and the dashboard's cookies are Secure.
 */
import assert from "node:assert/strict";
import { placeholders } from "../../deploy/render.ts";
import { toolTest } from "../support/ci.ts";
import { startTestGateway } from "../support/harness.ts";
import { CADDY, startCaddy, TEMPLATE, validate, writeCaddyfile } from "./caddy_process.ts";
import { assertFirstFrameBeforeLast, heldStreamUpstream } from "./held_stream.ts";
import { assertSecureSignIn } from "./secure_sign_in.ts";

toolTest(
  "caddy: caddy validate accepts the rendered Caddyfile, formatted and without warnings",
  [CADDY],
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "caddy-test-" });
    try {
      const values = { SERVER_NAME: "gw.example.com", UPSTREAM: "127.0.0.1:8787", BODY_LIMIT: "33MiB" };
      assert.deepEqual(placeholders(await Deno.readTextFile(TEMPLATE)).sort(), Object.keys(values).sort());
      const { code, output } = await validate(await writeCaddyfile(dir, values), dir);
      assert.equal(code, 0, output);
      assert.match(output, /Valid configuration/, output);
      assert.doesNotMatch(output, /"level":"(warn|error)"/, output);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

toolTest(
  "caddy: a stream passes frame by frame, and the dashboard's cookies are Secure over https",
  [CADDY],
  async () => {
    const upstream = heldStreamUpstream();
    const t = await startTestGateway({ TRUSTED_PROXIES: "127.0.0.1/32", ALPHA_UPSTREAM_URL: upstream.url });
    try {
      const caddy = await startCaddy(`127.0.0.1:${t.gw.port}`);
      try {
        const { key } = await t.newKey("5.00");
        await assertFirstFrameBeforeLast(caddy.base, key, upstream, caddy.client);
        await assertSecureSignIn(caddy.base, key, caddy.client);
      } finally {
        await caddy.close();
      }
    } finally {
      await t.close();
      await upstream.close();
    }
  },
);
