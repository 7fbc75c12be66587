/**
 * The decompression pre-pass (pdf_streams.ts) on hand-made PDFs: every way of writing a stream and its
 * filters that pdf.js accepts is measured, whatever the spelling; what cannot be measured is refused.
 * Bombs here inflate to 8 MiB against a 1 MiB budget (the real bound is FILE_LIMITS.maxPdfDecodedBytes).
 */
import assert from "node:assert/strict";
import { decodePDFRawStream, PDFContext, PDFName, PDFRawStream } from "pdf-lib";
import { GatewayError } from "../errors/gateway_error.ts";
import { deflatedRepeat, pdf, pdfFromObjects } from "../../tests/fixtures/files/build.ts";
import { decodeStages, type Stage } from "./pdf_decode.ts";
import { checkPdfStreams } from "./pdf_streams.ts";

const MiB = 1024 * 1024;
const BUDGET = 1 * MiB;
const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

async function outcome(bytes: Uint8Array): Promise<string> {
  try {
    await checkPdfStreams(bytes, BUDGET);
    return "ok";
  } catch (err) {
    if (err instanceof GatewayError) return err.code;
    throw err;
  }
}

const CATALOG = ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>"];
const page = (contents = "4 0 R") =>
  `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Contents ${contents} /Resources << >> >>`;
/** A one-page PDF whose object 4 is `content` (raw parts); `more` become objects 5, 6, … */
const doc = (content: (string | Uint8Array)[] | string, more: (string | (string | Uint8Array)[])[] = []) =>
  pdfFromObjects([...CATALOG, page(), content, ...more]);
const bomb = () => deflatedRepeat(8);
const stream = (dict: string, data: Uint8Array, eol = "\n") => [`${dict}\nstream${eol}`, data, "\nendstream"];

Deno.test("pre-pass: ordinary PDFs (fonts, object streams, 200 pages) pass", async () => {
  assert.equal(await outcome(await pdf(["Hello", "World"])), "ok");
  assert.equal(await outcome(await pdf(Array.from({ length: 200 }, (_, i) => `page ${i}`))), "ok");
  assert.equal(await outcome(doc(stream("<< /Length 8 >>", latin1("BT ET q Q")))), "ok");
});

Deno.test("pre-pass: every spelling of a Flate bomb is measured", async () => {
  const z = await bomb();
  const cases: Record<string, Uint8Array> = {
    "plain": doc(stream(`<< /Length ${z.length} /Filter /FlateDecode >>`, z)),
    "/Fl": doc(stream(`<< /Length ${z.length} /Filter /Fl >>`, z)),
    "/F abbreviation": doc(stream(`<< /Length ${z.length} /F /FlateDecode >>`, z)),
    "#65 escape": doc(stream(`<< /Length ${z.length} /Filter /Flat#65Decode >>`, z)),
    "lower-case #6c escape": doc(stream(`<< /Length ${z.length} /Filter /F#6cateDecode >>`, z)),
    "bare CR": doc(stream(`<< /Length ${z.length} /Filter /FlateDecode >>`, z, "\r")),
    "CRLF": doc(stream(`<< /Length ${z.length} /Filter /FlateDecode >>`, z, "\r\n")),
    "spaces before the EOL": doc(stream(`<< /Length ${z.length} /Filter /FlateDecode >>`, z, "   \r\n")),
    "wrong /Length": doc(stream(`<< /Length 10 /Filter /FlateDecode >>`, z)),
    "indirect /Length": doc(stream(`<< /Length 5 0 R /Filter /FlateDecode >>`, z), [`${z.length}`]),
    "indirect /Filter": doc(stream(`<< /Length ${z.length} /Filter 5 0 R >>`, z), ["/FlateDecode"]),
    "indirect array element": doc(stream(`<< /Length ${z.length} /Filter [5 0 R] >>`, z), ["/FlateDecode"]),
    "indirect array": doc(stream(`<< /Length ${z.length} /Filter 5 0 R >>`, z), ["[/FlateDecode]"]),
    "comment inside the dictionary": doc(stream(`<< /Length ${z.length} %x\n/Filter /FlateDecode >>`, z)),
    "[/ASCIIHexDecode /FlateDecode]": doc(
      stream(`<< /Filter [/AHx /FlateDecode] >>`, latin1(hex(z) + ">")),
    ),
    "[/ASCII85Decode /FlateDecode]": doc(stream(`<< /Filter [/A85 /Fl] >>`, latin1(ascii85(z) + "~>"))),
    // Object 5 defined twice (the second copy renamed from 6): either may be the one pdf.js reads.
    "two definitions of the filter object": renumber(
      doc(stream(`<< /Length ${z.length} /Filter 5 0 R >>`, z), ["/ASCIIHexDecode", "/FlateDecode"]),
      "6 0 obj\n/FlateDecode",
      "5 0 obj\n/FlateDecode",
    ),
    "a direct stream inside an array": doc([`[<< /Filter /FlateDecode >>\nstream\n`, z, "\nendstream]"]),
    "a direct stream 61 levels deep": doc([
      "[".repeat(60),
      "<< /Filter /Fl >>\nstream\n",
      z,
      "\nendstream",
      "]".repeat(60),
    ]),
    // pdf.js' own inflater ignores the checksum and what follows the last block (zlib refuses both).
    "bad checksum and junk after the data": doc(
      stream(`<< /Filter /FlateDecode >>`, concat([z.subarray(0, z.length - 4), latin1("\xde\xad junk")])),
    ),
  };
  for (const [name, bytes] of Object.entries(cases)) {
    assert.equal(await outcome(bytes), "file_limit_exceeded", name);
  }
});

Deno.test("pre-pass: objects hidden from a sequential reader are still found", async () => {
  const z = await bomb();
  // An object inside another stream's data (pdf.js reads it when the xref points there).
  const inner = [
    latin1(`7 0 obj\n<< /Length ${z.length} /Filter /FlateDecode >>\nstream\n`),
    z,
    latin1(
      "\nendstream\nendobj\n",
    ),
  ];
  const innerLen = inner.reduce((n, p) => n + p.length, 0);
  assert.equal(
    await outcome(doc(stream(`<< /Length ${innerLen} >>`, concat(inner)))),
    "file_limit_exceeded",
    "inside another stream",
  );
  // The filter name lives in an object stream.
  const objStm = latin1("6 0 /FlateDecode");
  assert.equal(
    await outcome(
      doc(stream(`<< /Length ${z.length} /Filter 6 0 R >>`, z), [
        stream(`<< /Type /ObjStm /N 1 /First 4 /Length ${objStm.length} >>`, objStm),
      ]),
    ),
    "file_limit_exceeded",
    "filter in an object stream",
  );
});

Deno.test("pre-pass: LZW, RunLength, ASCII85 and predictor bombs are measured", async () => {
  const lzw = lzwRun(2000); // 2,000 codes of growing runs of one byte: ~2 MB
  assert.ok(lzw.length < 4 * 1024, `lzw ${lzw.length}`);
  const rl = new Uint8Array(2 * 40_000).map((_, i) => i % 2 ? 0x20 : 129); // 40,000 runs of 128 bytes
  const z = latin1("z".repeat(400_000)); // 1.6 MB of zeros
  const tiny = await deflate(latin1("0123456789abcdef")); // 16 bytes, but a predictor makes 100 MB rows
  const cases: Record<string, Uint8Array> = {
    lzw: doc(stream(`<< /Length ${lzw.length} /Filter /LZWDecode >>`, lzw)),
    runLength: doc(stream(`<< /Length ${rl.length} /Filter /RunLengthDecode >>`, rl)),
    ascii85: doc(stream(`<< /Length ${z.length} /Filter /ASCII85Decode >>`, z)),
    predictor: doc(
      stream(
        `<< /Length ${tiny.length} /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 100000000 >> >>`,
        tiny,
      ),
    ),
  };
  for (const [name, bytes] of Object.entries(cases)) {
    assert.equal(await outcome(bytes), "file_limit_exceeded", name);
  }
});

Deno.test("pre-pass: images are skipped unless used as content; image codecs elsewhere are refused", async () => {
  const z = await bomb();
  const image =
    `/Type /XObject /Subtype /Image /Width 10 /Height 10 /BitsPerComponent 8 /ColorSpace /DeviceGray`;
  // pdf.js never decodes an image to extract text.
  assert.equal(
    await outcome(
      doc(stream("<< /Length 3 >>", latin1("q Q")), [stream(`<< ${image} /Filter /FlateDecode >>`, z)]),
    ),
    "ok",
  );
  assert.equal(
    await outcome(
      doc(stream("<< /Length 3 >>", latin1("q Q")), [stream(`<< ${image} /Filter /JBIG2Decode >>`, z)]),
    ),
    "ok",
  );
  // …but an "image" that a page uses as its content is decoded as content.
  assert.equal(await outcome(doc(stream(`<< ${image} /Filter /FlateDecode >>`, z))), "file_limit_exceeded");
  assert.equal(await outcome(doc(stream(`<< ${image} /Filter /JBIG2Decode >>`, z))), "file_unreadable");
  assert.equal(await outcome(doc(stream(`<< /Filter /DCTDecode >>`, z))), "file_unreadable");
});

Deno.test("pre-pass: what cannot be measured is refused as file_unreadable", async () => {
  const z = await bomb();
  for (
    const [name, bytes] of Object.entries({
      "unknown filter": doc(stream("<< /Filter /FooDecode >>", z)),
      "Crypt filter": doc(stream("<< /Filter /Crypt >>", z)),
      "BrotliDecode": doc(stream("<< /Filter /BrotliDecode >>", z)),
      "filter reference to nothing": doc(stream("<< /Filter 9 0 R >>", z)),
      "filter after a predictor": doc(
        stream("<< /Filter [/Fl /AHx] /DecodeParms [<< /Predictor 2 >>] >>", z),
      ),
      "inline image as an object": doc(["BI /F /Fl ID ", z, " EI"]),
      "a stream nested 65 levels deep": doc([
        "[".repeat(65),
        "<< /Filter /Fl >>\nstream\n",
        z,
        "\nendstream",
        "]".repeat(65),
      ]),
    })
  ) assert.equal(await outcome(bytes), "file_unreadable", name);
});

Deno.test("pre-pass: an encrypted document is left to the extraction process's limits", async () => {
  const z = await bomb();
  const bytes = pdfFromObjects(
    [
      ...CATALOG,
      page(),
      stream(`<< /Length ${z.length} /Filter /FlateDecode >>`, z),
      "<< /Filter /Standard >>",
    ],
    "/Encrypt 5 0 R ",
  );
  assert.equal(await outcome(bytes), "ok");
});

Deno.test("decoders: Flate (bad checksum and junk included), LZW, ASCII85, ASCIIHex, RunLength decode like pdf.js' decoders (pdf-lib's port)", async () => {
  const text = latin1("Lorem ipsum dolor sit amet, ".repeat(3000) + "\x00\xff\x80 end");
  const context = PDFContext.create();
  const z = await deflate(text);
  // 1.5 MiB of pseudo-random words: many back-references, and more than the inflater's sliding buffer.
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const words = Array.from(
    { length: 500 },
    () => "abcdefgh".slice(0, 2 + Math.floor(rnd() * 6)) + rnd().toString(36).slice(2, 5),
  );
  const long = latin1(
    Array.from({ length: 200_000 }, () => words[Math.floor(rnd() * words.length)]).join(" "),
  );
  const cases: [string, Stage, Uint8Array][] = [
    ["FlateDecode", { kind: "flate" }, z],
    ["FlateDecode", { kind: "flate" }, await deflate(long)],
    [
      "FlateDecode",
      { kind: "flate" },
      concat([z.subarray(0, z.length - 4), latin1("\x00\x00\x00\x00 junk")]),
    ],
    ["LZWDecode", { kind: "lzw" }, lzwEncode(text)],
    ["ASCII85Decode", { kind: "a85" }, latin1(ascii85(text) + "~>")],
    ["ASCIIHexDecode", { kind: "ahx" }, latin1(hex(text).replace(/(.{60})/g, "$1\n") + ">")],
    ["RunLengthDecode", { kind: "rl" }, runLength(text)],
  ];
  for (const [filter, st, data] of cases) {
    const raw = PDFRawStream.of(context.obj({ Filter: PDFName.of(filter) }), data);
    const theirs = decodePDFRawStream(raw).decode();
    const ours = decodeStages(data, [st], { left: 64 * MiB, total: 64 * MiB }, true);
    assert.deepEqual(ours, theirs, filter);
    if (data !== cases[1]![2]) assert.deepEqual(ours, text, filter);
    else assert.deepEqual(ours, long, filter);
  }
});

/** Replaces the first occurrence of ASCII `from` by `to` (same length) in binary data. */
function renumber(bytes: Uint8Array, from: string, to: string): Uint8Array {
  const a = latin1(from);
  for (let i = bytes.indexOf(a[0]!); i !== -1; i = bytes.indexOf(a[0]!, i + 1)) {
    if (a.every((b, k) => bytes[i + k] === b)) {
      const out = bytes.slice();
      out.set(latin1(to), i);
      return out;
    }
  }
  throw new Error(`${from} not found`);
}

async function deflate(data: Uint8Array): Promise<Uint8Array> {
  const out = await new Response(
    new Blob([data as Uint8Array<ArrayBuffer>]).stream()
      .pipeThrough(new CompressionStream("deflate")),
  ).arrayBuffer();
  return new Uint8Array(out);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) out.set(p, off), off += p.length;
  return out;
}

function ascii85(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 4) {
    const n = Math.min(4, b.length - i);
    let v = 0;
    for (let k = 0; k < 4; k++) v = v * 256 + (k < n ? b[i + k]! : 0);
    if (v === 0 && n === 4) {
      s += "z";
      continue;
    }
    const d: string[] = [];
    for (let k = 0; k < 5; k++) d.unshift(String.fromCharCode(33 + (v % 85))), v = Math.floor(v / 85);
    s += d.slice(0, n + 1).join("");
  }
  return s;
}

function runLength(b: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < b.length; i += 128) {
    out.push(Math.min(128, b.length - i) - 1, ...b.subarray(i, i + 128));
  }
  out.push(128);
  return Uint8Array.from(out);
}

/** The codes 32, 258, 259, … (each one byte longer than the last: a run of spaces), then EOD. */
function lzwRun(codes: number): Uint8Array {
  const w = lzwWriter();
  w.clear();
  w.data(32);
  for (let c = 258; c < 258 + codes; c++) w.data(c);
  return w.finish();
}

/**
 * LZW with EarlyChange 1 (PDF's default): 9–12-bit codes, a clear code before the table fills. The
 * code width follows the decoder's table, which is one entry behind the encoder's.
 */
function lzwEncode(data: Uint8Array): Uint8Array {
  const wr = lzwWriter();
  let table = new Map<string, number>();
  let next = 258;
  const code = (w: string) => w.length === 1 ? w.charCodeAt(0) : table.get(w)!;
  wr.clear();
  let w = "";
  for (const byte of data) {
    const c = String.fromCharCode(byte);
    if (w === "" || table.has(w + c)) {
      w += c;
      continue;
    }
    wr.data(code(w));
    table.set(w + c, next++);
    w = c;
    if (next >= 4000) {
      wr.data(code(w));
      w = "";
      wr.clear();
      table = new Map();
      next = 258;
    }
  }
  if (w) wr.data(code(w));
  return wr.finish();
}

function lzwWriter() {
  const out: number[] = [];
  let acc = 0, bits = 0, width = 9;
  let decoderNext = 258, decoderHasPrev = false;
  const put = (code: number) => {
    acc = ((acc << width) | code) >>> 0;
    bits += width;
    while (bits >= 8) {
      bits -= 8;
      out.push((acc >>> bits) & 0xff);
    }
    acc &= (1 << bits) - 1;
  };
  const data_ = (code: number) => {
    put(code);
    if (decoderHasPrev) {
      decoderNext++;
      if (((decoderNext + 1) & decoderNext) === 0) width = Math.min(Math.log2(decoderNext + 1) + 1, 12);
    }
    decoderHasPrev = true;
  };
  const clear = () => {
    put(256);
    width = 9;
    decoderNext = 258;
    decoderHasPrev = false;
  };
  const finish = () => {
    put(257);
    if (bits > 0) out.push((acc << (8 - bits)) & 0xff);
    return Uint8Array.from(out);
  };
  return { data: data_, clear, finish };
}
