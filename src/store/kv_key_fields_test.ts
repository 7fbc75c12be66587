import assert from "node:assert/strict";
import { KvStore } from "./kv_store.ts";
import { keyRecord } from "./testing/test_fixtures.ts";

Deno.test("KV: a key stored before the theta request limits existed reads them as null, in both record formats", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-kv-fields-" });
  const path = `${dir}/gateway.kv`;
  // Written as earlier versions wrote them: metadata without the two fields (`meta`), and the older format
  // with the money inside the record (`whole`).
  const { thetaHourlyRequests: _h, thetaDailyRequests: _d, ...before } = keyRecord("key_meta", {
    credited: 0n,
  });
  const { balance: _b, credited: _c, spent: _s, ...meta } = before;
  const { thetaHourlyRequests: _h2, thetaDailyRequests: _d2, ...whole } = keyRecord("key_whole", {
    balance: 5n,
    credited: 5n,
  });
  const old = await Deno.openKv(path);
  await old.set(["key", "key_meta"], meta);
  await old.set(["key_by_hash", meta.hash], "key_meta");
  await old.set(["key", "key_whole"], whole);
  old.close();

  const store = await KvStore.open(path);
  const limits = (r: { thetaHourlyRequests: unknown; thetaDailyRequests: unknown } | null) =>
    r && [r.thetaHourlyRequests, r.thetaDailyRequests];
  assert.deepEqual(limits(await store.getKey("key_meta")), [null, null]);
  assert.deepEqual(limits(await store.getKeyByHash(meta.hash)), [null, null]);
  assert.deepEqual(
    limits(await store.getKey("key_whole")),
    [null, null],
    "the older format, before migration",
  );
  assert.deepEqual((await store.listKeys()).map(limits), [[null, null], [null, null]]);
  assert.deepEqual(await store.getKey("key_meta"), keyRecord("key_meta"));
  store.close();
  await Deno.remove(dir, { recursive: true });
});
