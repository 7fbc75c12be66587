import assert from "node:assert/strict";
import { mulberry32 } from "../util/seeded_random.ts";
import { decodeUtf8 } from "./body.ts";

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** What the strict decoder makes of `bytes`: its text, or that it refused them. */
function expected(bytes: Uint8Array): string | "refused" {
  try {
    return strict.decode(bytes);
  } catch {
    return "refused";
  }
}

function actual(bytes: Uint8Array): string | "refused" {
  try {
    return decodeUtf8(bytes);
  } catch {
    return "refused";
  }
}

const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join(" ");

/** Pieces to build inputs from: well-formed characters of every length, U+FFFD and U+FEFF themselves, and the
 *  malformed kinds (a stray continuation, overlong forms, surrogates, past U+10FFFF, bytes no UTF-8 has, cut
 *  sequences). */
const PIECES: number[][] = [
  [0x61],
  [0x7b, 0x22],
  [0x00],
  [0x7f],
  [0xc3, 0xa9],
  [0xdf, 0xbf],
  [0xe2, 0x82, 0xac],
  [0xef, 0xbf, 0xbd],
  [0xef, 0xbb, 0xbf],
  [0xf0, 0x9f, 0x98, 0x80],
  [0xf4, 0x8f, 0xbf, 0xbf],
  [0x80],
  [0xbf],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf0, 0x80, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf5],
  [0xff],
  [0xc3],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
];

Deno.test("decodeUtf8 reads every piece as the strict decoder does", () => {
  for (const piece of PIECES) {
    for (const bytes of [piece, [0x61, ...piece, 0x62], [...piece, ...piece]]) {
      const b = new Uint8Array(bytes);
      assert.equal(actual(b), expected(b), hex(b));
    }
  }
  assert.equal(
    decodeUtf8(new Uint8Array([0xef, 0xbf, 0xbd])),
    "\uFFFD",
    "a U+FFFD of the client's own is kept",
  );
  assert.throws(() => decodeUtf8(new Uint8Array([0x61, 0xed, 0xa0, 0x80])), TypeError);
});

Deno.test("decodeUtf8 agrees with the strict decoder on 20,000 seeded inputs", () => {
  const random = mulberry32(0x5eed);
  const pick = (n: number) => Math.floor(random() * n);
  let refused = 0;
  for (let n = 0; n < 20_000; n++) {
    const bytes: number[] = [];
    // Mostly well-formed pieces (the first eleven), a malformed one now and then.
    for (let k = pick(12); k >= 0; k--) {
      bytes.push(...PIECES[pick(16) === 0 ? pick(PIECES.length) : pick(11)]!);
    }
    // Now and then a byte anywhere set to any value.
    if (pick(3) === 0) bytes[pick(bytes.length)] = pick(256);
    const b = new Uint8Array(bytes);
    const want = expected(b);
    if (want === "refused") refused++;
    assert.equal(actual(b), want, hex(b));
  }
  assert.ok(refused > 5_000 && refused < 15_000, `${refused} refused`);
});
