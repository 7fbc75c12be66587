/**
 * The decompression pre-pass of PDF extraction (a hostile-file bound, spec §8.2): before pdf.js sees
 * a file, every stream pdf.js could decode is decoded here — under ONE byte budget for the whole file,
 * charged as bytes come out of each filter — and the file is refused (file_limit_exceeded) once the
 * budget is spent. Nothing depends on how the filter is spelled: names are read with `#xx` escapes,
 * /Filter and /DecodeParms may be references or arrays (of references), /F and /DP count as pdf.js
 * counts them, the stream data starts after any EOL form, and objects of object streams are parsed.
 *
 * What pdf.js cannot decode is not decoded here either (a stream without `endstream`, a filter array
 * with a non-name). What this pass cannot vouch for is refused as file_unreadable: a /Crypt,
 * /BrotliDecode or unknown filter, an image codec on a stream that is not an image, a filter after a
 * predictor, a filter reference that resolves to nothing or to too many alternatives, `BI` where an
 * object is expected, nesting deeper than MAX_DEPTH. An encrypted document is not measured (its streams
 * are ciphertext here): the extraction process's memory and time limits bound it.
 *
 * Image XObjects (/Subtype /Image) are skipped: pdf.js never decodes images to extract text. An image
 * stream that something uses as content, font, CMap, Type 3 glyph or JavaScript (/Contents, /FontFile*,
 * /ToUnicode, /Encoding, /UseCMap, /CharProcs, /JS anywhere in the file) is decoded like any other.
 */
import { FILE_LIMITS, MiB } from "./limits.ts";
import { unreadable } from "./errors.ts";
import { type Budget, decodeStages, type FilterKind, type Stage } from "./pdf_decode.ts";
import { addObjectStream, type PdfObjects, scanPdf } from "./pdf_objects.ts";
import {
  type Dict,
  InlineImageInObject,
  isCmd,
  Lexer,
  MAX_DEPTH,
  Name,
  NestingTooDeep,
  Ref,
  Stream,
  type Value,
} from "./pdf_syntax.ts";

const KINDS: Record<string, FilterKind> = {
  FlateDecode: "flate",
  Fl: "flate",
  LZWDecode: "lzw",
  LZW: "lzw",
  ASCIIHexDecode: "ahx",
  AHx: "ahx",
  ASCII85Decode: "a85",
  A85: "a85",
  RunLengthDecode: "rl",
  RL: "rl",
};
const IMAGE_CODECS = new Set([
  "DCTDecode",
  "DCT",
  "JPXDecode",
  "JPX",
  "JBIG2Decode",
  "CCITTFaxDecode",
  "CCF",
]);
/** Keys whose (referenced) streams pdf.js decodes while extracting text, whatever the stream says it is. */
const USE_KEYS = [
  "Contents",
  "FontFile",
  "FontFile2",
  "FontFile3",
  "ToUnicode",
  "Encoding",
  "UseCMap",
  "CharProcs",
  "JS",
];
/** Distinct filter chains tried for one stream when references are ambiguous. */
const MAX_CHAINS = 8;

export async function checkPdfStreams(
  bytes: Uint8Array,
  maxDecoded: number = FILE_LIMITS.maxPdfDecodedBytes,
): Promise<void> {
  const budget: Budget = { left: maxDecoded, total: maxDecoded };
  try {
    // Lexing work: every byte a few times over, plus the decoded object streams.
    const objs = scanPdf(
      bytes,
      4 * bytes.byteLength + 2 * maxDecoded + 16 * MiB,
      (d) => d.has("Encrypt") || USE_KEYS.some((k) => d.has(k)),
    );
    // Encrypted streams are ciphertext here: this pass cannot measure them, and such a document is
    // bounded by the extraction process's memory and time limits alone (docs/files.md "Extraction").
    if (isEncrypted(objs)) return;
    const done = new Set<Stream>();
    // Object streams first (the list grows as their objects are parsed): other streams' filters and
    // lengths may refer to objects inside them.
    for (let i = 0; i < objs.streams.length; i++) {
      const s = objs.streams[i]!;
      const tables = objectStreamTables(objs, s.dict);
      if (tables.length === 0) continue;
      done.add(s);
      const data = await decodeStream(objs, s, budget, true);
      if (data) { for (const [first, n] of tables) addObjectStream(objs, data, first, n); }
    }
    const used = usedObjects(objs);
    for (const s of objs.streams) {
      if (done.has(s)) continue;
      if (isImage(s.dict) && !(s.num !== undefined && used.has(s.num))) continue;
      await decodeStream(objs, s, budget, false);
    }
  } catch (err) {
    if (err instanceof InlineImageInObject) {
      throw unreadable("PDF содержит встроенное изображение (BI) на месте объекта.");
    }
    if (err instanceof NestingTooDeep) {
      throw unreadable(`В PDF массивы и словари вложены глубже ${MAX_DEPTH} уровней.`);
    }
    throw err;
  }
}

function isEncrypted(objs: PdfObjects): boolean {
  const trailer = (d: Dict) => d.has("Encrypt") && (d.has("Root") || d.has("Size") || d.has("Prev"));
  return objs.trailers.some((d) => d.has("Encrypt")) || objs.dicts.some(trailer);
}

/** (/First, /N) pairs when the dictionary is an object stream's (both integers), else none. */
function objectStreamTables(objs: PdfObjects, d: Dict): [number, number][] {
  if (!d.has("First") || !d.has("N")) return [];
  const ints = (v: Value | undefined) =>
    objs.resolve(v).filter((x): x is number => typeof x === "number" && Number.isInteger(x));
  const out: [number, number][] = [];
  for (const f of ints(d.get("First"))) for (const n of ints(d.get("N"))) out.push([f, n]);
  return out.slice(0, MAX_CHAINS);
}

function isImage(d: Dict): boolean {
  const sub = d.get("Subtype");
  if (sub instanceof Name) return sub.name === "Image";
  return sub === undefined && d.has("Width") && d.has("Height");
}

/** Object numbers referred to under USE_KEYS, through up to two levels of indirect arrays/dicts. */
function usedObjects(objs: PdfObjects): Set<number> {
  const used = new Set<number>();
  const visit = (v: Value | undefined, depth: number): void => {
    if (v instanceof Ref) {
      if (used.has(v.num)) return;
      used.add(v.num);
      if (depth > 0) {
        for (const d of objs.defs.get(v.num) ?? []) {
          if (Array.isArray(d) || d instanceof Map) visit(d, depth - 1);
        }
      }
    } else if (Array.isArray(v)) { for (const x of v) visit(x, depth); }
    else if (v instanceof Map) { for (const x of v.values()) visit(x, depth); }
  };
  for (const d of objs.dicts) for (const k of USE_KEYS) if (d.has(k)) visit(d.get(k), 2);
  return used;
}

/** The end of the data as pdf.js could take it: /Length landing on `endstream`, or the search; the longer. */
function dataEnd(objs: PdfObjects, s: Stream): number {
  let end = s.searchEnd;
  for (const len of objs.resolve(s.dict.get("Length"))) {
    if (typeof len !== "number" || !Number.isInteger(len) || len < 0) continue;
    const e = s.start + len;
    if (e > s.buf.byteLength) continue;
    try {
      if (isCmd(new Lexer(s.buf, e).getObj(), "endstream")) end = Math.max(end, e);
    } catch { /* not endstream */ }
  }
  return end;
}

let lastYield = 0;

/** Decoding is synchronous; between streams the extraction host gets its event loop back now and then. */
async function decodeStream(
  objs: PdfObjects,
  s: Stream,
  budget: Budget,
  keep: boolean,
): Promise<Uint8Array | null> {
  if (performance.now() - lastYield > 50) {
    await new Promise((r) => setTimeout(r, 0));
    lastYield = performance.now();
  }
  const end = dataEnd(objs, s);
  if (end < s.start) return null; // pdf.js: "Missing endstream"
  const data = s.buf.subarray(s.start, end);
  let out: Uint8Array | null = null;
  for (const stages of filterChains(objs, s.dict)) out ??= decodeStages(data, stages, budget, keep);
  return out;
}

/** A reference's candidates; one that resolves to nothing is refused (it may hide what pdf.js sees). */
function candidates(objs: PdfObjects, v: Value | undefined, what: string): (Value | undefined)[] {
  if (!(v instanceof Ref)) return [v];
  const found = objs.resolve(v);
  if (found.length === 0) throw unreadable(`PDF ссылается на ${what} потока, которого нет в файле.`);
  return found;
}

const num = (objs: PdfObjects, v: Value | undefined): number | undefined => {
  const ns = objs.resolve(v).filter((x): x is number => typeof x === "number");
  return ns.length ? Math.max(...ns) : undefined;
};

/**
 * Every filter chain the stream may have (pdf.js: `/F` before `/Filter`, `/DP` before `/DecodeParms`).
 * A chain pdf.js would reject (a non-name in a filter array) is left out: pdf.js decodes nothing then.
 */
function filterChains(objs: PdfObjects, d: Dict): Stage[][] {
  const f = d.has("F") ? d.get("F") : d.get("Filter");
  const p = d.has("DP") ? d.get("DP") : d.get("DecodeParms");
  const chains = new Map<string, Stage[]>();
  const add = (stages: Stage[]) => {
    chains.set(JSON.stringify(stages), stages);
    if (chains.size > MAX_CHAINS) throw unreadable("Фильтры потока PDF заданы неоднозначно.");
  };
  for (const filter of candidates(objs, f, "фильтр")) {
    for (const params of candidates(objs, p, "параметры")) {
      if (filter instanceof Name) add([stage(objs, filter.name, params)]);
      else if (Array.isArray(filter)) {
        let partial: Stage[][] = [[]];
        for (let i = 0; i < filter.length; i++) {
          const names = candidates(objs, filter[i], "фильтр");
          const ps = Array.isArray(params) && i in params
            ? candidates(objs, params[i], "параметры")
            : [undefined];
          const next: Stage[][] = [];
          for (const name of names) {
            if (!(name instanceof Name)) continue; // pdf.js: "Bad filter name" → nothing decoded
            for (const prm of ps) {
              for (const head of partial) next.push([...head, stage(objs, name.name, prm)]);
            }
          }
          if (next.length > MAX_CHAINS) throw unreadable("Фильтры потока PDF заданы неоднозначно.");
          partial = next;
        }
        for (const chain of partial) add(chain);
      } else add([]); // no filter: the data as it is in the file
    }
  }
  for (const chain of chains.values()) {
    if (chain.slice(0, -1).some((s) => s.predictor)) {
      throw unreadable("В PDF после предиктора идёт ещё один фильтр.");
    }
  }
  return [...chains.values()];
}

function stage(objs: PdfObjects, name: string, params: Value | undefined): Stage {
  const kind = KINDS[name];
  if (!kind) {
    if (IMAGE_CODECS.has(name)) {
      throw unreadable(`Поток PDF, который не является изображением, сжат фильтром изображений ${name}.`);
    }
    throw unreadable(`PDF использует фильтр ${name.slice(0, 40)}, который не поддерживается.`);
  }
  const st: Stage = { kind };
  const dict = params instanceof Map ? params : undefined;
  if (kind === "lzw" && dict?.has("EarlyChange")) st.earlyChange = num(objs, dict.get("EarlyChange")) ?? 1;
  if ((kind === "flate" || kind === "lzw") && dict) {
    const predictor = num(objs, dict.get("Predictor")) || 1;
    if (predictor > 1) {
      if (predictor !== 2 && (predictor < 10 || predictor > 15)) {
        throw unreadable(`PDF использует неизвестный предиктор ${predictor}.`);
      }
      const colors = num(objs, dict.get("Colors")) || 1;
      const bits = num(objs, dict.has("BPC") ? dict.get("BPC") : dict.get("BitsPerComponent")) || 8;
      const columns = num(objs, dict.get("Columns")) || 1;
      const rowBytes = (columns * colors * bits + 7) >> 3;
      st.predictor = { inRow: predictor === 2 ? rowBytes : rowBytes + 1, outRow: rowBytes };
    }
  }
  return st;
}
