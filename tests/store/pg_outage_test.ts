/**
 * A store the gateway cannot reach answers 503 `service_unavailable` with `Retry-After: 1` (spec §7.2, README
 * "Errors"), and the gateway serves again once the database is back. The database is cut by a loopback TCP
 * relay between the gateway and the test Postgres; ignored without TEST_DATABASE_URL.
 */
import assert from "node:assert/strict";
import { withGateway } from "../support/harness.ts";
import { pgGatewayTest } from "../support/pg_harness.ts";

/** A TCP relay on `port` (0: any) to `target`; `cut()` closes the listener and every open connection. */
function relay(target: { hostname: string; port: number }, port = 0) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port });
  const open = new Set<Deno.Conn>();
  (async () => {
    for await (const client of listener) {
      const server = await Deno.connect(target).catch(() => undefined);
      if (!server) {
        client.close();
        continue;
      }
      open.add(client).add(server);
      const done = () => {
        for (const c of [client, server]) {
          open.delete(c);
          try {
            c.close();
          } catch { /* already closed */ }
        }
      };
      client.readable.pipeTo(server.writable).catch(() => {}).finally(done);
      server.readable.pipeTo(client.writable).catch(() => {}).finally(done);
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    cut() {
      listener.close();
      for (const c of open) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
      open.clear();
    },
  };
}

pgGatewayTest(
  "an unreachable store is 503 service_unavailable, and the gateway serves again when it is back",
  async (env) => {
    const db = new URL(env.DATABASE_URL);
    const target = { hostname: db.hostname, port: Number(db.port || 5432) };
    let link = relay(target);
    db.hostname = "127.0.0.1";
    db.port = String(link.port);
    await withGateway(async (t) => {
      const k = await t.newKey("1.00");
      const usage = () =>
        fetch(`${t.url}/v1/usage/requests`, { headers: { authorization: `Bearer ${k.key}` } });
      assert.equal((await usage()).status, 200);

      link.cut();
      const down = await usage();
      const body = await down.json();
      assert.equal(down.status, 503, JSON.stringify(body));
      assert.equal(body.detail?.error?.code ?? body.error?.code, "service_unavailable");
      assert.equal(down.headers.get("retry-after"), "1");
      const ready = await fetch(`${t.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual((await ready.json()).failing, ["store"]);

      link = relay(target, link.port);
      assert.equal((await usage()).status, 200, "served again once the database is back");
    }, { ...env, DATABASE_URL: db.toString() });
    link.cut();
  },
);
