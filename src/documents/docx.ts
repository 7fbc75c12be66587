/**
 * .docx: paragraphs and tables of the main document in order; a heading paragraph (style Heading…/Title
 * or an outline level) starts a new section. Anchors `#section=<n>`. ≤ 50,000 blocks (paragraphs,
 * table rows and tables), counted while parsing.
 */
import { FILE_LIMITS } from "./limits.ts";
import { overLimit, unreadable } from "./errors.ts";
import type { SectionSink } from "./sections.ts";
import { parsePart, readRels } from "./xml.ts";
import { Ooxml } from "./zip.ts";

const HEADING_STYLE = /^(heading|title|subtitle|заголовок)/i;

interface TableCtx {
  rows: string[];
  cells: string[];
  cell: string[];
}

export async function extractDocx(bytes: Uint8Array, sink: SectionSink): Promise<void> {
  const zip = await Ooxml.open(bytes);
  try {
    const main = await mainPart(zip);
    let blocks = 0;
    const countBlock = () => {
      if (++blocks > FILE_LIMITS.maxBlocks) {
        throw overLimit(`В документе больше ${FILE_LIMITS.maxBlocks} блоков.`);
      }
    };
    let section = "";
    const flush = () => {
      if (section.trim() !== "") sink.addSplit(section.replace(/\n+$/, ""));
      section = "";
    };
    const append = (text: string) => {
      section += text;
      if (section.length >= FILE_LIMITS.sectionChars) flush();
    };

    const tables: TableCtx[] = [];
    let para: string[] | null = null;
    let heading = false;
    let inRun = 0;
    let inText = false;

    await parsePart(zip, main, {
      open(name, a) {
        switch (name) {
          case "w:p":
            countBlock();
            para = [];
            heading = false;
            break;
          case "w:pStyle":
            if (HEADING_STYLE.test(a["w:val"] ?? "")) heading = true;
            break;
          case "w:outlineLvl":
            if (Number(a["w:val"]) < 9) heading = true;
            break;
          case "w:r":
            inRun++;
            break;
          case "w:t":
            inText = true;
            break;
          case "w:tab":
            if (inRun && para) para.push("\t");
            break;
          case "w:br":
          case "w:cr":
            if (inRun && para) para.push("\n");
            break;
          case "w:tbl":
            countBlock();
            tables.push({ rows: [], cells: [], cell: [] });
            break;
          case "w:tr":
            countBlock();
            if (tables.length) tables[tables.length - 1]!.cells = [];
            break;
          case "w:tc":
            if (tables.length) tables[tables.length - 1]!.cell = [];
            break;
        }
      },
      text(t) {
        if (inText && para) para.push(t);
      },
      close(name) {
        switch (name) {
          case "w:t":
            inText = false;
            break;
          case "w:r":
            inRun--;
            break;
          case "w:p": {
            const text = (para ?? []).join("");
            para = null;
            const table = tables[tables.length - 1];
            if (table) table.cell.push(text);
            else if (heading && text.trim() !== "") {
              flush();
              append(`${text}\n`);
            } else append(`${text}\n`);
            break;
          }
          case "w:tc": {
            const t = tables[tables.length - 1];
            if (t) t.cells.push(t.cell.join(" ").replace(/\s+/g, " ").trim());
            break;
          }
          case "w:tr": {
            const t = tables[tables.length - 1];
            if (t) t.rows.push(`| ${t.cells.join(" | ")} |`);
            break;
          }
          case "w:tbl": {
            const t = tables.pop();
            if (!t) break;
            const text = t.rows.join("\n");
            const outer = tables[tables.length - 1];
            if (outer) outer.cell.push(text);
            else append(`${text}\n`);
            break;
          }
        }
      },
    });
    flush();
  } finally {
    await zip.close();
  }
}

async function mainPart(zip: Ooxml): Promise<string> {
  const rels = await readRels(zip, "");
  for (const r of rels.values()) {
    if (r.type.endsWith("/officeDocument") && zip.has(r.target)) return r.target;
  }
  if (zip.has("word/document.xml")) return "word/document.xml";
  throw unreadable("В архиве нет основной части документа Word.");
}
