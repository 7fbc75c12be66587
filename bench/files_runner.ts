/**
 * Fixture side of the file-extraction bench (bench/files_bench.ts):
 *
 *   build <dir>      writes every fixture of CASES into <dir>, prints {name: bytes} as JSON
 *
 * The fixtures are built in memory with the test builders (tests/fixtures/files/build.ts), in a
 * process of their own (building the zip bomb alone needs a 100 MiB string), then uploaded by the
 * bench to a fresh gateway subprocess each.
 */
import { mulberry32 } from "../src/util/seeded_random.ts";
import { type FileKind, MiB } from "../src/documents/limits.ts";
import {
  docx,
  docxXml,
  pdf,
  pdfBomb,
  pdfEncryptedBomb,
  xlsxSharedStringBomb,
  zip,
} from "../tests/fixtures/files/build.ts";
import { PDFDocument } from "pdf-lib";

export interface Case {
  name: string;
  kind: FileKind;
  /** What the extraction must do: "ok", or the refusal code. */
  expect: string;
  /** Table label. */
  label: string;
}

export const CASES: Case[] = [
  { name: "xlsx-10mib", kind: "xlsx", expect: "ok", label: "10 MiB XLSX" },
  { name: "pdf-200-pages", kind: "pdf", expect: "ok", label: "200-page PDF" },
  { name: "docx-10mib", kind: "docx", expect: "ok", label: "10 MiB DOCX" },
  { name: "pdf-bomb", kind: "pdf", expect: "file_limit_exceeded", label: "hostile: PDF bomb, /FlateDecode" },
  {
    name: "pdf-bomb-hex-name",
    kind: "pdf",
    expect: "file_limit_exceeded",
    label: "hostile: PDF bomb, /Flat#65Decode",
  },
  {
    name: "pdf-bomb-bare-cr",
    kind: "pdf",
    expect: "file_limit_exceeded",
    label: "hostile: PDF bomb, bare CR",
  },
  {
    name: "pdf-bomb-filter-chain",
    kind: "pdf",
    expect: "file_limit_exceeded",
    label: "hostile: PDF bomb, [/ASCIIHexDecode /FlateDecode]",
  },
  {
    name: "pdf-bomb-indirect-filter",
    kind: "pdf",
    expect: "file_limit_exceeded",
    label: "hostile: PDF bomb, /Filter 6 0 R",
  },
  {
    name: "pdf-bomb-encrypted",
    kind: "pdf",
    expect: "file_limit_exceeded",
    label: "hostile: PDF bomb, RC4-encrypted (process memory limit)",
  },
  {
    name: "xlsx-shared-string",
    kind: "xlsx",
    expect: "file_limit_exceeded",
    label: "hostile: XLSX 10 × 20,000 cells of one 32 K string",
  },
  { name: "zip-bomb", kind: "docx", expect: "file_limit_exceeded", label: "hostile: zip bomb DOCX" },
  {
    name: "pdf-10000-pages",
    kind: "pdf",
    expect: "file_limit_exceeded",
    label: "hostile: 10,000-page PDF",
  },
  { name: "docx-xxe", kind: "docx", expect: "file_unreadable", label: "hostile: XXE DOCX" },
  {
    name: "csv-10mib-line",
    kind: "csv",
    expect: "file_limit_exceeded",
    label: "hostile: CSV with one 10 MiB line",
  },
];

const enc = (s: string) => new TextEncoder().encode(s);
/** Files must stay within §8.2's single-file limit (10 MiB); the big fixtures aim just under it. */
const TARGET_MAX = 10 * MiB;
const TARGET_MIN = 10 * MiB - 256 * 1024;

/** Deterministic pseudo-random text (mulberry32): realistic text compresses ~4×, so a text-only 10 MiB
 * Office file needs low-redundancy text to stay inside the extracted-text limits. */
const rng = mulberry32;
const ALPHA = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** Random words of 2–10 letters, exactly `len` characters. */
function words(r: () => number, len: number): string {
  let s = "";
  while (s.length < len) {
    const n = 2 + Math.floor(r() * 9);
    for (let i = 0; i < n; i++) s += ALPHA[Math.floor(r() * ALPHA.length)];
    s += " ";
  }
  return s.slice(0, len - 1) + ".";
}

/** Grows `units` until the built file is within [TARGET_MIN, TARGET_MAX] (size is ~linear in units). */
async function sized(build: (units: number) => Promise<Uint8Array>, guess: number): Promise<Uint8Array> {
  let units = guess;
  for (let i = 0; i < 6; i++) {
    const bytes = await build(units);
    if (bytes.byteLength <= TARGET_MAX && bytes.byteLength >= TARGET_MIN) return bytes;
    units = Math.floor(units * ((TARGET_MAX - 96 * 1024) / bytes.byteLength));
  }
  throw new Error("fixture size did not converge");
}

/**
 * 10 MiB XLSX: one sheet, rows of 10 cells (a number, a date serial, 8 shared strings of ~180 random
 * characters): ~95,000 cells (≤ 200,000), ~9,500 rows (≤ 20,000), every cell ≪ 32,768 characters.
 * The workbook is written here (a Map for the shared strings) because the test builder's shared-string
 * lookup is quadratic; the zip comes from the test builder.
 */
function xlsxBig(rows: number): Promise<Uint8Array> {
  const r = rng(1);
  const S = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
  const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
  const shared: string[] = [];
  const index = new Map<string, number>();
  const sst = (s: string) => {
    let i = index.get(s);
    if (i === undefined) index.set(s, i = shared.push(s) - 1);
    return i;
  };
  const cols = "ABCDEFGHIJ";
  const out: string[] = [];
  for (let i = 1; i <= rows; i++) {
    let row = `<row r="${i}"><c r="A${i}"><v>${i}</v></c><c r="B${i}"><v>${45000 + (i % 900)}</v></c>`;
    for (let c = 2; c < 10; c++) {
      row += `<c r="${cols[c]}${i}" t="s"><v>${sst(words(r, 150 + Math.floor(r() * 60)))}</v></c>`;
    }
    out.push(row + "</row>");
  }
  return zip({
    "[Content_Types].xml":
      `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`,
    "xl/workbook.xml":
      `<?xml version="1.0"?><workbook ${S} xmlns:r="${REL}"><sheets><sheet name="Данные" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    "xl/_rels/workbook.xml.rels":
      `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rIdS" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    "xl/worksheets/sheet1.xml": `<?xml version="1.0"?><worksheet ${S}><sheetData>${
      out.join("")
    }</sheetData></worksheet>`,
    "xl/sharedStrings.xml": `<?xml version="1.0"?><sst ${S} count="${shared.length}">${
      shared.map((s) => `<si><t>${s}</t></si>`).join("")
    }</sst>`,
  });
}

/**
 * 10 MiB DOCX of plain paragraphs of 4,095 random characters. The length is chosen so four paragraphs
 * and their line breaks fill exactly one 16,384-character section: with longer or uneven paragraphs the
 * extractor cuts each full section into a 16 KiB piece plus a short remainder, and a 10 MiB text-only
 * document would pass the 1000-section limit.
 */
function docxBig(paragraphs: number): Promise<Uint8Array> {
  const r = rng(2);
  return docx(Array.from({ length: paragraphs }, () => ({ p: words(r, 4095) })));
}

/** 200 pages, 18 lines of ~60 characters on each (the test builder draws the text block on every page). */
function pdf200(): Promise<Uint8Array> {
  const r = rng(3);
  return pdf(
    Array.from({ length: 200 }, (_, p) =>
      [
        `Page ${p + 1}`,
        ...Array.from({ length: 17 }, () => words(r, 60)),
      ].join("\n")),
  );
}

async function build(name: string): Promise<Uint8Array> {
  switch (name) {
    case "xlsx-10mib":
      return await sized(xlsxBig, 9000);
    case "pdf-200-pages":
      return await pdf200();
    case "docx-10mib":
      return await sized(docxBig, 3300);
    case "zip-bomb": // one part inflating to 100 MiB of one byte (over the 64 MiB per-part bound)
      return await docx(
        [],
        docxXml([]).replace("<w:body>", `<w:body><w:p><w:r><w:t>${"A".repeat(100 * MiB)}`),
      );
    case "pdf-bomb":
      return await pdfBomb("plain");
    case "pdf-bomb-hex-name":
      return await pdfBomb("hex-name");
    case "pdf-bomb-bare-cr":
      return await pdfBomb("bare-cr");
    case "pdf-bomb-filter-chain":
      return await pdfBomb("filter-chain");
    case "pdf-bomb-indirect-filter":
      return await pdfBomb("indirect-filter");
    case "pdf-bomb-encrypted":
      return await pdfEncryptedBomb();
    case "xlsx-shared-string":
      return await xlsxSharedStringBomb();
    case "pdf-10000-pages": {
      const doc = await PDFDocument.create();
      for (let i = 0; i < 10_000; i++) doc.addPage([10, 10]);
      return await doc.save();
    }
    case "docx-xxe":
      return await docx(
        [],
        `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><w:document xmlns:w="x"><w:body><w:p><w:r><w:t>&x;</w:t></w:r></w:p></w:body></w:document>`,
      );
    case "csv-10mib-line":
      return enc("a,".repeat(5 * MiB));
  }
  throw new Error(`unknown case ${name}`);
}

if (import.meta.main) {
  const [mode, dir] = Deno.args;
  if (mode === "build" && dir) {
    const sizes: Record<string, number> = {};
    for (const k of CASES) {
      const bytes = await build(k.name);
      await Deno.writeFile(`${dir}/${k.name}`, bytes);
      sizes[k.name] = bytes.byteLength;
    }
    console.log(JSON.stringify(sizes));
  } else {
    console.error("usage: files_runner.ts build <dir>");
    Deno.exit(2);
  }
}
