/**
 * deploy/nginx/gateway.conf as an operator renders it (docs/deploy/reverse-proxy.md): every placeholder
 * filled, and Debian's nginx accepts it (`nginx -t`).
 */
import assert from "node:assert/strict";
import { placeholders } from "../../deploy/render.ts";
import { toolTest } from "../support/ci.ts";
import { configTest, NGINX, TEMPLATE, testValues, writeConfig } from "./nginx_process.ts";

toolTest("nginx: nginx -t accepts the rendered gateway.conf", [NGINX], async () => {
  const dir = await Deno.makeTempDir({ prefix: "nginx-test-" });
  try {
    const values = testValues("127.0.0.1:8787");
    assert.deepEqual(placeholders(await Deno.readTextFile(TEMPLATE)).sort(), Object.keys(values).sort());
    await writeConfig(dir, values);
    const { code, output } = await configTest(dir);
    assert.equal(code, 0, output);
    assert.match(output, /syntax is ok/, output);
    assert.match(output, /test is successful/, output);
    assert.doesNotMatch(output, /\[warn\]/, output);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
