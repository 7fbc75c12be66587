/**
 * Packed usage entries (kv_usage_pack.ts): every row reads back as it was written, whatever its strings,
 * numbers and bigints and whatever it shares with the row before; a gateway's row takes a few dozen bytes; and
 * bytes that are not a packed entry (cut short, flipped, trailing, a wrong count) are refused with a RangeError,
 * never misread as rows.
 */
import assert from "node:assert/strict";
import type { UsageRow } from "./types.ts";
import { PACKED, RowPacker, unpackRows } from "./kv_usage_pack.ts";
import { usageRow } from "./testing/test_fixtures.ts";
import { mulberry32 } from "../util/seeded_random.ts";
import { idGenerator } from "../util/ids.ts";

function pack(rows: readonly UsageRow[]): Uint8Array {
  const packer = new RowPacker();
  for (const u of rows) packer.add(u);
  return packer.finish();
}

/** The row as a store gives it back: an optional field set to undefined is absent. */
const stored = (u: UsageRow) => Object.fromEntries(Object.entries(u).filter(([, v]) => v !== undefined));

/** Random rows whose fields often repeat the row before's, of every kind each field can hold. */
function randomRows(seed: number, n: number): UsageRow[] {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const strings = [
    "",
    "k3",
    "key_a",
    "модель-k3",
    "😀x",
    "\ud800",
    "a\udc00b",
    "\ufeffbom",
    "x".repeat(300),
    "req_abc",
  ];
  const numbers = [
    0,
    1,
    127,
    128,
    2 ** 31,
    2 ** 51 - 1,
    2 ** 51,
    2 ** 53 - 1,
    -1,
    -(2 ** 51) + 1,
    0.5,
    -0,
    NaN,
    Infinity,
    -Infinity,
    1e300,
    2 ** 53 + 2,
  ];
  const bigints = [
    0n,
    1n,
    -1n,
    (1n << 51n) - 1n,
    1n << 51n,
    (1n << 52n) - 1n,
    1n << 52n,
    -(1n << 52n),
    1n << 64n,
    -(1n << 127n) + 1n,
    1n << 500n,
    12_345_000n,
  ];
  const num = () => rnd() < 0.5 ? Math.floor(rnd() * 5_000) : pick(numbers);
  const big = () => rnd() < 0.5 ? BigInt(Math.floor(rnd() * 1e9)) : pick(bigints);
  const rows: UsageRow[] = [];
  let prev = usageRow("req_0", "key_0");
  for (let i = 0; i < n; i++) {
    const keep = rnd() < 0.6;
    const str = (old: string) => keep && rnd() < 0.8 ? old : pick(strings);
    const id = rnd() < 0.7
      ? `${prev.requestId.slice(0, Math.floor(rnd() * (prev.requestId.length + 1)))}${pick(strings)}${i}`
      : pick(strings);
    const u: UsageRow = {
      requestId: id,
      keyId: str(prev.keyId),
      family: str(prev.family) as UsageRow["family"],
      model: str(prev.model),
      endpoint: str(prev.endpoint),
      stream: rnd() < 0.5,
      status: str(prev.status) as UsageRow["status"],
      createdAt: rnd() < 0.7 ? prev.createdAt + Math.floor(rnd() * 40) - 20 : num(),
      inputTokens: num(),
      cachedInputTokens: num(),
      outputTokens: num(),
      webSearchRequests: num(),
      searchFee: rnd() < 0.5 ? undefined : big(),
      reserved: big(),
      charged: big(),
      writtenOff: big(),
      servedModel: rnd() < 0.4 ? undefined : keep ? prev.servedModel ?? pick(strings) : pick(strings),
      usageSource: str(prev.usageSource) as UsageRow["usageSource"],
      rates: keep ? prev.rates : { input: big(), cacheRead: big(), output: big(), search: big() },
    };
    rows.push(u);
    prev = u;
  }
  return rows;
}

Deno.test("packed rows read back as they were written, whatever they hold and share", () => {
  for (let seed = 1; seed <= 300; seed++) {
    const rows = randomRows(seed, 1 + (seed % 40));
    assert.deepEqual(unpackRows(pack(rows)), rows.map(stored), `seed ${seed}`);
  }
  // An entry of no rows, and a request id that shares the first half of a surrogate pair with the one before.
  assert.deepEqual(unpackRows(pack([])), []);
  const pair = [usageRow("a\ud83d\ude00", "key_a"), usageRow("a\ud83d\ude01", "key_a")];
  assert.deepEqual(unpackRows(pack(pair)), pair);
});

Deno.test("undo takes back the last row: the entry is as if it had never been added", () => {
  const rows = randomRows(7, 20);
  const packer = new RowPacker();
  for (const [i, u] of rows.entries()) {
    packer.add(u);
    if (i % 3 === 0) {
      packer.add(rows[(i + 5) % rows.length]!);
      packer.undo();
    }
  }
  assert.deepEqual(packer.finish(), pack(rows));
  // And finish starts the next entry afresh.
  packer.add(rows[0]!);
  assert.deepEqual(packer.finish(), pack([rows[0]!]));
});

Deno.test("a gateway's rows of one key and model take at most 24 bytes each, the first one 160", () => {
  const newId = idGenerator();
  const rows = Array.from({ length: 300 }, (_, i) =>
    usageRow(newId("req_"), "key_8Kq2mZ0aBcDeFgHiJkLm", {
      createdAt: 1_796_000_000_000 + 300 - i,
      stream: i % 5 === 0,
      inputTokens: 1_200 + i,
      cachedInputTokens: i % 2 ? 1_024 : 0,
      outputTokens: 300 + i,
      reserved: 98_000_000n,
      charged: 12_345_000n + BigInt(i),
      rates: { input: 1_000_000n, cacheRead: 100_000n, output: 4_000_000n, search: 0n },
    }));
  const first = pack(rows.slice(0, 1)).length;
  const all = pack(rows).length;
  assert.ok(first <= 160, `${first}`);
  assert.ok((all - first) / 299 <= 24, `${(all - first) / 299} bytes a row`);
});

Deno.test("bytes that are not a packed entry are refused with a RangeError, never read as rows", () => {
  const bytes = pack(randomRows(3, 12));
  // Every cut, the empty one included.
  for (let n = 0; n < bytes.length; n++) {
    assert.throws(() => unpackRows(bytes.subarray(0, n)), RangeError, `cut at ${n}`);
  }
  // Another tag; a byte after the rows; one row more than written.
  assert.throws(() => unpackRows(Uint8Array.of(PACKED + 1, ...bytes.subarray(1))), RangeError);
  assert.throws(() => unpackRows(Uint8Array.of(...bytes, 0)), RangeError);
  const more = bytes.slice();
  more[1]!++;
  assert.throws(() => unpackRows(more), RangeError);
  // A huge count with no rows behind it.
  assert.throws(() => unpackRows(Uint8Array.of(PACKED, 255, 255, 255, 255)), RangeError);
  // A flipped byte: a RangeError or rows, nothing else (no other error, no hang).
  const rnd = mulberry32(11);
  for (let i = 0; i < 3_000; i++) {
    const flipped = bytes.slice();
    const at = 5 + Math.floor(rnd() * (bytes.length - 5));
    flipped[at] = Math.floor(rnd() * 256);
    try {
      assert.ok(Array.isArray(unpackRows(flipped)));
    } catch (err) {
      assert.ok(err instanceof RangeError, `byte ${at}: ${err}`);
    }
  }
});
