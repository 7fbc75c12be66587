import assert from "node:assert/strict";
import postgres from "postgres";
import { PG_SKIP_NOTE, TEST_DATABASE_URL } from "../src/store/testing/pg_test_schema.ts";
import { Framer, PgWireCounter } from "./pg_wire.ts";

const enc = new TextEncoder();

/** One protocol message: a type byte (none for 0) and an int32 length counting itself. */
function message(type: string | 0, body: Uint8Array): Uint8Array {
  const head = type === 0 ? 4 : 5;
  const out = new Uint8Array(head + body.length);
  if (type !== 0) out[0] = type.charCodeAt(0);
  new DataView(out.buffer).setInt32(head - 4, body.length + 4);
  out.set(body, head);
  return out;
}

const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), at += p.length;
  return out;
};

Deno.test("Framer: messages split anywhere come out whole, bodies only where asked", () => {
  const startup = new Uint8Array([0, 3, 0, 0, 1, 2]);
  const stream = concat([
    message(0, startup),
    message("P", enc.encode("s1\0SELECT 1\0\0\0")),
    message("S", new Uint8Array()),
    message("D", enc.encode("Sx\0")),
  ]);
  for (const step of [1, 2, 5, 7, stream.length]) {
    const seen: [number, number[] | undefined][] = [];
    const f = new Framer(false, (t) => t !== "D".charCodeAt(0), (t, b) => {
      seen.push([t, b && [...b]]);
      if (t === 0) f.typed = true;
    });
    for (let i = 0; i < stream.length; i += step) f.push(stream.subarray(i, i + step));
    assert.deepEqual(seen, [
      [0, [...startup]],
      ["P".charCodeAt(0), [...enc.encode("s1\0SELECT 1\0\0\0")]],
      ["S".charCodeAt(0), []],
      ["D".charCodeAt(0), undefined],
    ], `chunks of ${step}`);
  }
});

Deno.test(`PgWireCounter counts a client's round trips by statement${PG_SKIP_NOTE}`, {
  ignore: !TEST_DATABASE_URL,
}, async () => {
  const wire = await PgWireCounter.start(TEST_DATABASE_URL!);
  const sql = postgres(wire.url, { max: 1, onnotice: () => {} });
  try {
    await sql`SELECT 1 AS one`; // the connection's start-up (its type query) is left out below
    await wire.reset();
    for (let i = 0; i < 3; i++) await sql`SELECT ${i}::int AS x`;
    await sql.begin((tx) => tx`SELECT 2 AS two`);
    const { trips, encrypted } = await wire.trips();
    const runs = (q: string) => {
      const t = trips.get(q);
      return t && { runs: t.runs, describes: t.describes, answered: t.ms.length };
    };
    // A statement with parameters is described (one Flush round trip) before its first run on a connection.
    assert.deepEqual(runs("SELECT $1::int AS x"), { runs: 3, describes: 1, answered: 3 });
    assert.deepEqual(runs("begin"), { runs: 1, describes: 0, answered: 1 });
    assert.deepEqual(runs("SELECT 2 AS two"), { runs: 1, describes: 0, answered: 1 });
    assert.deepEqual(runs("commit"), { runs: 1, describes: 0, answered: 1 });
    assert.deepEqual(trips.size, 4);
    assert.deepEqual(encrypted, 0);
  } finally {
    await sql.end({ timeout: 1 });
    await wire.close();
  }
});
