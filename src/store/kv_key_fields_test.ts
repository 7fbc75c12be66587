import assert from "node:assert/strict";
import { KvStore } from "./kv_store.ts";
import { keyRecord } from "./testing/test_fixtures.ts";

/** A record's metadata as versions before per-family settings wrote it: theta's settings as its own fields. */
function stored(id: string, theta: Record<string, unknown>) {
  const { families: _f, balance: _b, credited: _c, spent: _s, ...meta } = keyRecord(id);
  return { ...meta, thetaPaused: false, ...theta };
}

Deno.test("KV: a key stored before the theta request limits existed reads no limits (no theta entry), in both record formats", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-kv-fields-" });
  const path = `${dir}/gateway.kv`;
  // Written as earlier versions wrote them: metadata without the two limits (`meta`), and the older format
  // with the money inside the record (`whole`).
  const meta = stored("key_meta", {});
  const whole = { ...stored("key_whole", {}), balance: 5n, credited: 5n, spent: 0n };
  const old = await Deno.openKv(path);
  await old.set(["key", "key_meta"], meta);
  await old.set(["key_by_hash", meta.hash], "key_meta");
  await old.set(["key", "key_whole"], whole);
  old.close();

  const store = await KvStore.open(path);
  const families = (r: { families: unknown } | null) => r?.families;
  assert.deepEqual(families(await store.getKey("key_meta")), {});
  assert.deepEqual(families(await store.getKeyByHash(meta.hash)), {});
  assert.deepEqual(families(await store.getKey("key_whole")), {}, "the older format, before migration");
  assert.deepEqual((await store.listKeys()).map(families), [{}, {}]);
  assert.deepEqual(await store.getKey("key_meta"), keyRecord("key_meta"));
  store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("KV: theta's settings stored as the record's own fields read as families.theta; writes keep the new shape only", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-kv-fields-" });
  const path = `${dir}/gateway.kv`;
  const old = await Deno.openKv(path);
  await old.set(
    ["key", "key_p"],
    stored("key_p", { thetaPaused: true, thetaHourlyRequests: 5, thetaDailyRequests: 0 }),
  );
  await old.set(["key", "key_l"], stored("key_l", { thetaDailyRequests: 40 }));
  await old.set(["key", "key_w"], {
    ...stored("key_w", { thetaPaused: true }),
    balance: 5n,
    credited: 5n,
    spent: 0n,
  });
  old.close();

  const store = await KvStore.open(path);
  const theta = (paused: boolean, hourlyRequests: number | null, dailyRequests: number | null) => ({
    theta: { paused, hourlyRequests, dailyRequests },
  });
  assert.deepEqual((await store.getKey("key_p"))?.families, theta(true, 5, 0));
  assert.deepEqual((await store.getKey("key_l"))?.families, theta(false, null, 40));
  assert.deepEqual(
    (await store.getKey("key_w"))?.families,
    theta(true, null, null),
    "money inside, unmigrated",
  );
  // listKeys migrates the older format (key_w) and rewrites it; updateKey rewrites key_p.
  assert.deepEqual((await store.listKeys()).map((k) => [k.id, k.families]), [
    ["key_l", theta(false, null, 40)],
    ["key_p", theta(true, 5, 0)],
    ["key_w", theta(true, null, null)],
  ]);
  const p = (await store.getKey("key_p"))!;
  await store.updateKey({ ...p, name: "renamed" });
  store.close();

  const kv = await Deno.openKv(path);
  const newShape = (v: unknown) => {
    const rec = v as Record<string, unknown>;
    return ["thetaPaused", "thetaHourlyRequests", "thetaDailyRequests"].every((f) => !(f in rec)) &&
      "families" in rec;
  };
  assert.ok(newShape((await kv.get(["key", "key_p"])).value), "updateKey writes the new shape");
  assert.ok(newShape((await kv.get(["key", "key_w"])).value), "the migration writes the new shape");
  assert.deepEqual(
    ((await kv.get(["key", "key_p"])).value as { families: unknown }).families,
    theta(true, 5, 0),
  );
  kv.close();
  await Deno.remove(dir, { recursive: true });
});
