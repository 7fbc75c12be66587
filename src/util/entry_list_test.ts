import assert from "node:assert/strict";
import { EntryList, outEntry } from "./entry_list.ts";

const values = <T>(l: EntryList<T>) => {
  const out: T[] = [];
  l.forEach((v) => out.push(v));
  return out;
};

Deno.test("EntryList: entries taken out from the front, the middle and the end; twice changes nothing", () => {
  const l = new EntryList<string>();
  const [a, b, c, d] = ["a", "b", "c", "d"].map((v) => l.add(v));
  l.remove(b!);
  assert.deepEqual(values(l), ["a", "c", "d"]);
  l.remove(a!);
  l.remove(d!);
  l.remove(b!);
  assert.deepEqual(values(l), ["c"]);
  assert.equal(l.size, 1);
  l.add("e");
  assert.deepEqual(values(l), ["c", "e"]);
  l.remove(c!);
  assert.deepEqual(values(l), ["e"]);
  assert.equal(l.size, 1);
});

Deno.test("EntryList.forEach: one taken out meanwhile is skipped, the one walked on may take itself out, one added is visited", () => {
  const l = new EntryList<string>();
  const seen: string[] = [];
  const entries: Record<string, ReturnType<typeof l.add>> = {};
  for (const v of ["a", "b", "c", "d"]) entries[v] = l.add(v);
  l.forEach((v) => {
    seen.push(v);
    if (v === "a") l.remove(entries.a!); // itself
    if (v === "b") {
      l.remove(entries.b!);
      l.remove(entries.c!); // the next one
      l.add("e");
    }
  });
  assert.deepEqual(seen, ["a", "b", "d", "e"]);
  assert.deepEqual(values(l), ["d", "e"]);
  assert.equal(l.size, 2);
});

Deno.test("EntryList.takeAll: every value in order, the list empty after; removing a taken entry changes nothing", () => {
  const l = new EntryList<number>();
  const one = l.add(1);
  l.add(2);
  l.add(3);
  assert.deepEqual(l.takeAll(), [1, 2, 3]);
  assert.equal(l.size, 0);
  l.remove(one);
  assert.equal(l.size, 0);
  l.add(4);
  assert.deepEqual(values(l), [4]);
  l.remove(outEntry());
  assert.equal(l.size, 1);
});
