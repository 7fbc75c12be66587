/**
 * Streaming XML for OOXML parts, on htmlparser2 in xmlMode: SAX-style events, so limits are checked
 * while parsing and no tree is ever built. Safe by construction against XXE and entity expansion:
 * htmlparser2 never resolves DTDs or declared entities (only the five XML entities and numeric
 * references are decoded), and any DOCTYPE or ENTITY declaration is refused outright.
 */
import { Parser } from "htmlparser2";
import { unreadable } from "./errors.ts";
import type { Ooxml } from "./zip.ts";

export interface XmlHandlers {
  open?(name: string, attrs: Record<string, string>): void;
  close?(name: string): void;
  text?(text: string): void;
}

/** Parses one part of the container, streaming; handler exceptions stop the parse at once. */
export async function parsePart(zip: Ooxml, path: string, h: XmlHandlers): Promise<void> {
  let failure: unknown;
  const fail = (err: unknown) => {
    failure ??= err;
    throw err;
  };
  const parser = new Parser({
    onopentag: (name, attrs) => {
      if (failure === undefined) h.open?.(name, attrs);
    },
    onclosetag: (name) => {
      if (failure === undefined) h.close?.(name);
    },
    ontext: (t) => {
      if (failure === undefined) h.text?.(t);
    },
    onprocessinginstruction: (name) => {
      const n = name.toLowerCase();
      if (n.startsWith("!doctype") || n.startsWith("!entity")) {
        fail(
          unreadable(
            `Часть ${path} содержит DOCTYPE или объявление сущностей; такие документы не принимаются.`,
          ),
        );
      }
    },
  }, { xmlMode: true, decodeEntities: true });
  await zip.readText(path, (chunk) => {
    try {
      parser.write(chunk);
    } catch (err) {
      fail(err);
    }
  });
  parser.end();
  if (failure !== undefined) throw failure;
}

/** `Relationship` targets of a .rels part by id, resolved against the folder of `source`. */
export async function readRels(
  zip: Ooxml,
  source: string,
): Promise<Map<string, { target: string; type: string }>> {
  const dir = source.includes("/") ? source.slice(0, source.lastIndexOf("/") + 1) : "";
  const relsPath = `${dir}_rels/${source.slice(dir.length)}.rels`;
  const out = new Map<string, { target: string; type: string }>();
  if (!zip.has(relsPath)) return out;
  await parsePart(zip, relsPath, {
    open(name, a) {
      if (name === "Relationship" && a.Id && a.Target && a.TargetMode !== "External") {
        out.set(a.Id, { target: resolvePath(dir, a.Target), type: a.Type ?? "" });
      }
    },
  });
  return out;
}

/** Joins a relative zip path onto a folder, resolving `.` and `..`; a leading `/` is from the root. */
export function resolvePath(dir: string, target: string): string {
  const parts = (target.startsWith("/") ? target.slice(1) : dir + target).split("/");
  const out: string[] = [];
  for (const p of parts) {
    if (p === "..") out.pop();
    else if (p !== "." && p !== "") out.push(p);
  }
  return out.join("/");
}
