/**
 * The Store contract of uploaded files (store.ts putFile … deleteFile: the quota taken atomically, bytes and
 * sections, expiry and the sweep of a listing) and of expiring sets (updateMembers, listMembers), one suite
 * for every backend, registered beside the others in kv_store_test.ts and pg_store_test.ts. That both are
 * kept across a reopen is in store_contract.ts.
 */
import assert from "node:assert/strict";
import { contractTest, type StoreBackend } from "./store_contract.ts";
import { bytes, file, member, memberIds, putMember, removeMembers, TEST_SET } from "./test_fixtures.ts";

export function filesContract(backend: StoreBackend): void {
  const test = contractTest(backend);

  test("putFile takes the quota atomically: uploads racing for the last slot, one wins", async ({ store }) => {
    const now = Date.now();
    const quota = { maxFiles: 2, maxBytes: 1_000 };
    assert.equal(await store.putFile(file("file_0", "key_a", now), bytes("abc"), bytes("[]"), quota), "ok");
    // Several rounds, so the later ones race on a warm connection pool too.
    for (let round = 0; round < 3; round++) {
      const racers = [0, 1, 2, 3, 4, 5].map((i) => file(`file_${round}_${i}`, "key_a", now));
      const results = await Promise.all(
        racers.map((f) => store.putFile(f, bytes("abc"), bytes("[]"), quota)),
      );
      assert.deepEqual(results.filter((r) => r === "ok").length, 1, `round ${round}: ${results}`);
      const winner = racers[results.indexOf("ok")]!;
      assert.deepEqual((await store.listFiles("key_a", now)).map((f) => f.id), ["file_0", winner.id]);
      // Deleting gives the quota back; a second delete finds nothing.
      assert.equal(await store.deleteFile("key_a", winner.id), true);
      assert.equal(await store.deleteFile("key_a", winner.id), false);
    }
    // Bytes count too, and another key has its own quota (and cannot delete this key's file).
    const big = file("file_3", "key_b", now, { storedBytes: 1_001 });
    assert.equal(await store.putFile(big, bytes("abc"), bytes("[]"), quota), "quota_exceeded");
    assert.equal(await store.putFile(file("file_4", "key_b", now), bytes("abc"), bytes("[]"), quota), "ok");
    assert.equal(await store.deleteFile("key_b", "file_0"), false);
    assert.equal((await store.listFiles("key_b", now)).length, 1);
  });

  test("a file's bytes and sections round-trip; listed oldest first", async ({ store }) => {
    const now = Date.now();
    const quota = { maxFiles: 5, maxBytes: 10_000_000 };
    const data = new Uint8Array(150_001).map((_, i) => i % 251); // several KV chunks
    const sections = [{ text: "страница 1", anchor: "p1" }, { text: "x".repeat(70_000), anchor: "p2" }];
    const f = file("file_b", "key_a", now + 1);
    assert.equal(await store.putFile(f, data, bytes(JSON.stringify(sections)), quota), "ok");
    const g = file("file_a", "key_a", now + 2, {
      filename: "отчёт «q1».pdf",
      contentType: "application/pdf",
    });
    assert.equal(await store.putFile(g, new Uint8Array(0), new Uint8Array(0), quota), "ok");
    assert.deepEqual(await store.getFileData(f), data);
    assert.deepEqual(await store.getFileSections(f), sections);
    assert.deepEqual(await store.getFileSections(g), []);
    assert.deepEqual(await store.listFiles("key_a", now), [f, g]);
    assert.deepEqual(await store.getFile("key_a", "file_a", now), g);
  });

  test("an expired file is not returned, is swept, and gives its quota back", async ({ store }) => {
    const now = Date.now();
    const quota = { maxFiles: 1, maxBytes: 1_000 };
    const f = file("file_1", "key_a", now, { expiresAt: now + 60_000 });
    assert.equal(
      await store.putFile(f, bytes("hello"), bytes('[{"text":"hello","anchor":"p1"}]'), quota),
      "ok",
    );
    assert.deepEqual(await store.getFile("key_a", "file_1", now), f);
    assert.equal(new TextDecoder().decode(await store.getFileData(f)), "hello");
    assert.deepEqual(await store.getFileSections(f), [{ text: "hello", anchor: "p1" }]);
    assert.equal(await store.getFile("key_b", "file_1", now), null, "another key's file is not found");

    const later = f.expiresAt;
    assert.equal(await store.getFile("key_a", "file_1", later), null);
    assert.deepEqual(await store.listFiles("key_a", later), []);
    // The listing swept it: the slot is free again for a file created after the expiry.
    const next = file("file_2", "key_a", later);
    assert.equal(await store.putFile(next, bytes("x"), bytes("[]"), quota), "ok");
    assert.deepEqual(await store.getFileData(f), new Uint8Array(0), "the expired file's bytes are gone");
  });

  test("expiring sets: listed per owner, first to expire first, expired ones left out", async ({ store }) => {
    await putMember(store, member("k1", "b", 200));
    await putMember(store, member("k1", "a", 100));
    await putMember(store, member("k2", "c", 100));
    assert.deepEqual(await memberIds(store, "k1", 150), ["a", "b"]);
    assert.deepEqual(await memberIds(store, "k1", 1_100), ["b"]);
    assert.deepEqual(await memberIds(store, "k1", 1_200), []);
    assert.deepEqual(await memberIds(store, "k2", 150), ["c"]);
    assert.deepEqual(await store.listMembers("other_set", "k1", 150), [], "sets are apart");
  });

  test("expiring sets: one change removes some and renews another; a member both removed and written stays", async ({ store }) => {
    for (const id of ["a", "b", "c"]) await putMember(store, member("k", id, 0));
    const renewed = { ...member("k", "a", 500), values: ["v_next", "v_other"] };
    await putMember(store, renewed, ["a", "b"]);
    assert.deepEqual(await store.listMembers(TEST_SET, "k", 600), [member("k", "c", 0), renewed]);
    await removeMembers(store, "k", ["a", "nothing"]);
    assert.deepEqual(await store.listMembers(TEST_SET, "k", 600), [member("k", "c", 0)]);
    await removeMembers(store, "k", []);
    assert.deepEqual(await store.listMembers(TEST_SET, "k", 600), [member("k", "c", 0)]);
  });

  test("expiring sets and documents: a malformed name is refused", async ({ store }) => {
    await assert.rejects(store.listMembers("Bad Name", "k", 0));
    await assert.rejects(store.updateMembers("not a name", "k", { remove: [] }, 0));
    await assert.rejects(store.updateDocument("x-y", () => ({ doc: null, result: null })));
  });
}
