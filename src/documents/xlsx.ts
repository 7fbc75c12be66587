/**
 * .xlsx: each sheet in workbook order, rows as CSV lines (shared strings resolved, empty columns kept
 * by position), split into parts of bounded size. Anchors `#sheet=<n>&part=<n>`. The limits of spec §8.2
 * (200 sheets, 20,000 rows per sheet, 200,000 cells, 32,768 characters per cell) are checked while
 * parsing. Numbers and dates are given as stored (dates as serial numbers).
 */
import { FILE_LIMITS } from "./limits.ts";
import { overLimit, unreadable } from "./errors.ts";
import type { SectionSink } from "./sections.ts";
import { parsePart, readRels } from "./xml.ts";
import { Ooxml } from "./zip.ts";

export async function extractXlsx(bytes: Uint8Array, sink: SectionSink): Promise<void> {
  const zip = await Ooxml.open(bytes);
  try {
    const wb = "xl/workbook.xml";
    if (!zip.has(wb)) throw unreadable("В архиве нет книги Excel.");
    const sheets: { name: string; rid: string }[] = [];
    await parsePart(zip, wb, {
      open(name, a) {
        if (name === "sheet") {
          if (sheets.length >= FILE_LIMITS.maxSheets) {
            throw overLimit(`В книге больше ${FILE_LIMITS.maxSheets} листов.`);
          }
          sheets.push({ name: a.name ?? "", rid: a["r:id"] ?? "" });
        }
      },
    });
    const rels = await readRels(zip, wb);
    const shared = await sharedStrings(zip, rels);
    const cells = { n: 0 };
    for (const [i, s] of sheets.entries()) {
      const path = rels.get(s.rid)?.target;
      if (!path || !zip.has(path)) throw unreadable(`Лист ${i + 1} не найден в архиве.`);
      await sheet(zip, path, i + 1, s.name, shared, cells, sink);
    }
  } finally {
    await zip.close();
  }
}

function cellTooLong(): Error {
  return overLimit(`В ячейке больше ${FILE_LIMITS.maxCellChars} символов.`);
}

async function sharedStrings(
  zip: Ooxml,
  rels: Map<string, { target: string; type: string }>,
): Promise<string[]> {
  const path = [...rels.values()].find((r) => r.type.endsWith("/sharedStrings"))?.target ??
    "xl/sharedStrings.xml";
  const out: string[] = [];
  if (!zip.has(path)) return out;
  let cur: string[] | null = null;
  let len = 0;
  let inT = false;
  let phonetic = 0;
  await parsePart(zip, path, {
    open(name) {
      if (name === "si") {
        cur = [];
        len = 0;
      } else if (name === "t") inT = true;
      else if (name === "rPh") phonetic++;
    },
    text(t) {
      if (cur && inT && !phonetic) {
        len += t.length;
        if (len > FILE_LIMITS.maxCellChars) throw cellTooLong();
        cur.push(t);
      }
    },
    close(name) {
      if (name === "t") inT = false;
      else if (name === "rPh") phonetic--;
      else if (name === "si" && cur) {
        out.push(cur.join(""));
        cur = null;
      }
    },
  });
  return out;
}

/** "BC12" → 54 (0-based column), or -1 when the reference is missing or odd. */
export function columnOf(ref: string | undefined): number {
  const m = /^([A-Z]{1,3})\d*$/.exec(ref ?? "");
  if (!m) return -1;
  let n = 0;
  for (const ch of m[1]!) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

function csvField(v: string): string {
  return /[",\n\r]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

async function sheet(
  zip: Ooxml,
  path: string,
  index: number,
  name: string,
  shared: string[],
  cells: { n: number },
  sink: SectionSink,
): Promise<void> {
  const header = `Лист ${index}: ${name}\n`;
  let part = 1;
  let buf = "";
  const emit = () => {
    sink.add(`sheet=${index}&part=${part++}`, header + buf);
    buf = "";
  };
  let rows = 0;
  let row: string[] | null = null;
  /** Characters of `row` once joined (fields + commas), counted before the join. */
  let rowChars = 0;
  let cell: { type: string; col: number; value: string[]; len: number } | null = null;
  let inValue = false;
  await parsePart(zip, path, {
    open(tag, a) {
      if (tag === "row") {
        if (++rows > FILE_LIMITS.maxRowsPerSheet) {
          throw overLimit(`На листе ${index} больше ${FILE_LIMITS.maxRowsPerSheet} строк.`);
        }
        row = [];
        rowChars = 0;
      } else if (tag === "c" && row) {
        if (++cells.n > FILE_LIMITS.maxCells) {
          throw overLimit(`В книге больше ${FILE_LIMITS.maxCells} ячеек.`);
        }
        cell = { type: a.t ?? "n", col: columnOf(a.r), value: [], len: 0 };
      } else if ((tag === "v" || tag === "t") && cell) inValue = true;
    },
    text(t) {
      if (inValue && cell) {
        cell.len += t.length;
        if (cell.len > FILE_LIMITS.maxCellChars) throw cellTooLong();
        cell.value.push(t);
      }
    },
    close(tag) {
      if (tag === "v" || tag === "t") inValue = false;
      else if (tag === "c" && cell && row) {
        const raw = cell.value.join("");
        let v = raw;
        if (cell.type === "s") v = shared[Number(raw)] ?? "";
        else if (cell.type === "b") v = raw === "1" ? "TRUE" : "FALSE";
        const col = cell.col < 0 ? row.length : cell.col;
        const field = csvField(v);
        // Every cell counts against the extracted-text bound before anything is joined: cells may all
        // point at one 32,768-character shared string, which the join would repeat 20,000 times. A gap
        // of empty columns costs one comma each.
        rowChars += field.length + 1 + Math.max(0, col - row.length);
        sink.reserve(buf.length + header.length + rowChars);
        while (row.length < col) row.push("");
        row[col] = field;
        cell = null;
      } else if (tag === "row" && row) {
        while (row.length && row[row.length - 1] === "") row.pop();
        buf += row.join(",") + "\n";
        row = null;
        if (buf.length >= FILE_LIMITS.sectionChars) emit();
      }
    },
  });
  if (buf !== "" || part === 1) emit();
}
