/** Extraction: anchors and order for every format, the limits of §8.2 and hostile files. */
import assert from "node:assert/strict";
import { PDFDocument } from "pdf-lib";
import { GatewayError } from "../../src/errors/gateway_error.ts";
import { DocumentExtraction } from "../../src/documents/mod.ts";
import type { FileKind } from "../../src/documents/limits.ts";
import { docx, docxXml, pdf, pptx, xlsx, xlsxParts, zip } from "../fixtures/files/build.ts";

const ID = "file_test";
/** One extraction for the file's tests, as a gateway has one (its idle processes outlive a test: unref'd). */
const documents = new DocumentExtraction();
const extractSections = documents.sections.bind(documents);
const enc = (s: string) => new TextEncoder().encode(s);

async function refused(kind: FileKind, bytes: Uint8Array, code: string, maxMs = 5000): Promise<GatewayError> {
  const t0 = performance.now();
  const err = await extractSections(ID, kind, bytes).then(() => undefined, (e) => e);
  assert.ok(err instanceof GatewayError, `expected ${code}, got ${err}`);
  assert.equal(err.code, code, err.detail);
  assert.ok(performance.now() - t0 < maxMs, `took ${performance.now() - t0} ms`);
  return err;
}

Deno.test("pdf: one section per page, #page=<n>", async () => {
  const s = await extractSections(ID, "pdf", await pdf(["Alpha page one", "Second page text", "Third"]));
  assert.deepEqual(s.map((x) => x.anchor), [`${ID}#page=1`, `${ID}#page=2`, `${ID}#page=3`]);
  assert.equal(s[0]!.text, "Alpha page one");
  assert.equal(s[1]!.text, "Second page text");
});

Deno.test("pdf: 200 pages pass, 201 and 10,000 pages are refused fast", async () => {
  assert.equal((await extractSections(ID, "pdf", await pdf(Array(200).fill("p")))).length, 200);
  await refused("pdf", await pdf(Array(201).fill("")), "file_limit_exceeded");
  const doc = await PDFDocument.create();
  for (let i = 0; i < 10_000; i++) doc.addPage([10, 10]);
  await refused("pdf", await doc.save(), "file_limit_exceeded", 3000);
});

Deno.test("pdf: a decompression bomb stream is refused without inflating it all", async () => {
  // 300 MiB of zeros deflated: inflates past the 256 MiB bound.
  const zeros = new Uint8Array(1024 * 1024);
  const cs = new CompressionStream("deflate");
  const w = cs.writable.getWriter();
  const chunks: Uint8Array[] = [];
  const reading = (async () => {
    for await (const c of cs.readable) chunks.push(c);
  })();
  for (let i = 0; i < 300; i++) await w.write(zeros);
  await w.close();
  await reading;
  const stream = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let off = 0;
  for (const c of chunks) stream.set(c, off), off += c.byteLength;
  const head = enc(`%PDF-1.4\n1 0 obj\n<< /Length ${stream.byteLength} /Filter /FlateDecode >>\nstream\n`);
  const tail = enc("\nendstream\nendobj\ntrailer\n<< >>\n%%EOF\n");
  const bytes = new Uint8Array(head.byteLength + stream.byteLength + tail.byteLength);
  bytes.set(head), bytes.set(stream, head.byteLength), bytes.set(tail, head.byteLength + stream.byteLength);
  await refused("pdf", bytes, "file_limit_exceeded");
});

Deno.test("pdf: not a PDF, or damaged → file_unreadable", async () => {
  await refused("pdf", enc("hello"), "file_unreadable");
  await refused("pdf", enc("%PDF-1.7\n garbage garbage"), "file_unreadable");
});

Deno.test("docx: headings split sections, paragraphs and tables in order", async () => {
  const s = await extractSections(
    ID,
    "docx",
    await docx([
      { p: "Intro paragraph" },
      { h: "Chapter A" },
      { p: "Text of A & more" },
      { table: [["k", "v"], ["x", "1"]] },
      { h: "Chapter B" },
      { p: "Text of B" },
    ]),
  );
  assert.deepEqual(s.map((x) => x.anchor), [1, 2, 3].map((n) => `${ID}#section=${n}`));
  assert.equal(s[0]!.text, "Intro paragraph");
  assert.equal(s[1]!.text, "Chapter A\nText of A & more\n| k | v |\n| x | 1 |");
  assert.equal(s[2]!.text, "Chapter B\nText of B");
});

Deno.test("docx: more than 50,000 blocks → file_limit_exceeded", async () => {
  const body = "<w:p/>".repeat(50_001);
  await refused(
    "docx",
    await docx([], docxXml([]).replace("<w:body>", `<w:body>${body}`)),
    "file_limit_exceeded",
  );
});

Deno.test("pptx: a section per slide incl. notes, #slide=<n>", async () => {
  const s = await extractSections(
    ID,
    "pptx",
    await pptx([{ lines: ["Title one", "bullet"] }, { lines: ["Second"], notes: "Say hello" }]),
  );
  assert.deepEqual(s.map((x) => x.anchor), [`${ID}#slide=1`, `${ID}#slide=2`]);
  assert.equal(s[0]!.text, "Title one\nbullet");
  assert.equal(s[1]!.text, "Second\n\nЗаметки докладчика:\nSay hello");
});

Deno.test("pptx: more than 500 slides → file_limit_exceeded", async () => {
  await refused(
    "pptx",
    await pptx(Array.from({ length: 501 }, () => ({ lines: ["s"] }))),
    "file_limit_exceeded",
  );
});

Deno.test("xlsx: sheets in order, shared strings resolved, gaps kept, #sheet=<n>&part=<n>", async () => {
  const s = await extractSections(
    ID,
    "xlsx",
    await xlsx([
      { name: "Итоги", rows: [["name", "sum"], ["a,b", 12.5], ["c", null, 3]] },
      { name: "Empty", rows: [] },
    ]),
  );
  assert.deepEqual(s.map((x) => x.anchor), [`${ID}#sheet=1&part=1`, `${ID}#sheet=2&part=1`]);
  assert.equal(s[0]!.text, 'Лист 1: Итоги\nname,sum\n"a,b",12.5\nc,,3\n');
  assert.equal(s[1]!.text, "Лист 2: Empty\n");
});

Deno.test("xlsx: long sheets are split into parts", async () => {
  const rows = Array.from({ length: 3000 }, (_, i) => [`row ${i}`, i, "x".repeat(20)]);
  const s = await extractSections(ID, "xlsx", await xlsx([{ name: "big", rows }]));
  assert.ok(s.length > 1);
  s.forEach((x, i) => assert.equal(x.anchor, `${ID}#sheet=1&part=${i + 1}`));
  assert.ok(s.every((x) => x.text.startsWith("Лист 1: big\n")));
  assert.equal(s.map((x) => x.text.slice("Лист 1: big\n".length)).join("").split("\n").length - 1, 3000);
});

Deno.test("xlsx: limits of §8.2 are checked while parsing", async () => {
  await refused(
    "xlsx",
    await xlsx(Array.from({ length: 201 }, (_, i) => ({ name: `s${i}`, rows: [] }))),
    "file_limit_exceeded",
  );
  await refused(
    "xlsx",
    await xlsx([{ name: "r", rows: Array.from({ length: 20_001 }, () => [1]) }]),
    "file_limit_exceeded",
  );
  const wide = Array.from({ length: 10_001 }, () => Array(20).fill(1));
  await refused(
    "xlsx",
    await xlsx([{ name: "c", rows: wide.slice(0, 10_000) }, { name: "d", rows: wide }]),
    "file_limit_exceeded",
  );
  await refused("xlsx", await xlsx([{ name: "t", rows: [["y".repeat(32_769)]] }]), "file_limit_exceeded");
});

Deno.test("text formats: strict UTF-8, bounded sections", async () => {
  const s = await extractSections(ID, "md", enc("# Заголовок\n\nтекст"));
  assert.deepEqual(s, [{ text: "# Заголовок\n\nтекст", anchor: `${ID}#section=1` }]);
  const long = await extractSections(ID, "txt", enc("line of text\n".repeat(5000)));
  assert.ok(long.length > 1 && long.every((x) => x.text.length <= 16_384));
  assert.deepEqual(long.map((x) => x.anchor), long.map((_, i) => `${ID}#section=${i + 1}`));
  assert.equal(long.map((x) => x.text).join(""), "line of text\n".repeat(5000));
  await refused("txt", new Uint8Array([0x61, 0xff, 0xfe, 0x62]), "file_unreadable");
  await refused("csv", enc("a,".repeat(5 * 1024 * 1024)), "file_limit_exceeded");
});

Deno.test("hostile OOXML: DOCTYPE/entities, bombs, many entries, malformed, wrong container", async () => {
  const lol =
    `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>` +
    `<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>&lol2;</w:t></w:r></w:p></w:body></w:document>`;
  await refused("docx", await docx([], lol), "file_unreadable");
  const xxe =
    `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><w:document xmlns:w="x"><w:body><w:p><w:r><w:t>&x;</w:t></w:r></w:p></w:body></w:document>`;
  await refused("docx", await docx([], xxe), "file_unreadable");
  // A zip bomb: a part that inflates to 100 MiB of one repeated byte (over the 64 MiB per-part bound).
  const bomb = docxXml([]).replace("<w:body>", `<w:body><w:p><w:r><w:t>${"A".repeat(100 * 1024 * 1024)}`);
  await refused("docx", await docx([], bomb), "file_limit_exceeded");
  // Thousands of entries.
  const many: Record<string, string> = { "word/document.xml": docxXml([{ p: "x" }]) };
  for (let i = 0; i < 10_001; i++) many[`junk/${i}.bin`] = "";
  await refused("docx", await zip(many, { level: 0 }), "file_limit_exceeded");
  // Nested zips are never opened: a document whose only extra part is an archive still extracts.
  const nested = await zip({
    "word/document.xml": docxXml([{ p: "outer" }]),
    "word/inner.zip": await zip({ "a": "b" }),
  });
  assert.equal((await extractSections(ID, "docx", nested))[0]!.text, "outer");
  await refused("docx", enc("PK\x03\x04 broken archive"), "file_unreadable");
  await refused("docx", await pdf(["I am a PDF"]), "file_unreadable");
  await refused("xlsx", await zip({ "x.txt": "no workbook" }), "file_unreadable");
  const parts = xlsxParts([{ name: "s", rows: [["v"]] }]);
  parts["xl/sharedStrings.xml"] =
    `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><sst><si><t>&a;</t></si></sst>`;
  await refused("xlsx", await zip(parts), "file_unreadable");
});
