/**
 * .pptx: text of each slide in presentation order, followed by its speaker notes. Anchors
 * `#slide=<n>`. ≤ 500 slides (counted while reading the slide list), ≤ 50,000 blocks (paragraphs).
 */
import { FILE_LIMITS } from "./limits.ts";
import { overLimit, unreadable } from "./errors.ts";
import type { SectionSink } from "./sections.ts";
import { parsePart, readRels } from "./xml.ts";
import { Ooxml } from "./zip.ts";

export async function extractPptx(bytes: Uint8Array, sink: SectionSink): Promise<void> {
  const zip = await Ooxml.open(bytes);
  try {
    const pres = "ppt/presentation.xml";
    if (!zip.has(pres)) throw unreadable("В архиве нет презентации PowerPoint.");
    const ids: string[] = [];
    await parsePart(zip, pres, {
      open(name, a) {
        if (name === "p:sldId" && a["r:id"]) {
          if (ids.length >= FILE_LIMITS.maxSlides) {
            throw overLimit(`В презентации больше ${FILE_LIMITS.maxSlides} слайдов.`);
          }
          ids.push(a["r:id"]);
        }
      },
    });
    const rels = await readRels(zip, pres);
    const blocks = { n: 0 };
    for (const [i, id] of ids.entries()) {
      const slide = rels.get(id)?.target;
      if (!slide || !zip.has(slide)) throw unreadable(`Слайд ${i + 1} не найден в архиве.`);
      let text = await drawingText(zip, slide, blocks);
      const notes = [...(await readRels(zip, slide)).values()].find((r) => r.type.endsWith("/notesSlide"));
      if (notes && zip.has(notes.target)) {
        const noteText = await drawingText(zip, notes.target, blocks);
        if (noteText.trim() !== "") text += `\n\nЗаметки докладчика:\n${noteText}`;
      }
      sink.add(`slide=${i + 1}`, text);
    }
  } finally {
    await zip.close();
  }
}

/** Text of a slide or notes part: `a:p` paragraphs on lines, `a:br` breaks; slide-number fields skipped. */
async function drawingText(zip: Ooxml, path: string, blocks: { n: number }): Promise<string> {
  const lines: string[] = [];
  let para: string[] | null = null;
  let inText = false;
  let skipField = 0;
  let chars = 0;
  await parsePart(zip, path, {
    open(name, a) {
      if (name === "a:p") {
        if (++blocks.n > FILE_LIMITS.maxBlocks) {
          throw overLimit(`В презентации больше ${FILE_LIMITS.maxBlocks} блоков.`);
        }
        para = [];
      } else if (name === "a:t") inText = true;
      else if (name === "a:br" && para) para.push("\n");
      else if (name === "a:fld" && a.type === "slidenum") skipField++;
    },
    text(t) {
      if (inText && para && !skipField) {
        chars += t.length;
        if (chars > FILE_LIMITS.maxExtractedChars) throw overLimit("Текст слайда слишком велик.");
        para.push(t);
      }
    },
    close(name) {
      if (name === "a:t") inText = false;
      else if (name === "a:fld" && skipField) skipField--;
      else if (name === "a:p" && para) {
        const line = para.join("");
        if (line.trim() !== "") lines.push(line);
        para = null;
      }
    },
  });
  return lines.join("\n");
}
