/**
 * Reading an upload (spec §4.3). The body is read with a hard bound of 10 MiB + 64 KiB counted on the wire
 * (Content-Length checked first, then every chunk), so nothing past that is ever buffered; only then is
 * the multipart body parsed. Exactly one part `file`, at most one more field, `purpose`.
 */
import { GatewayError } from "../errors/gateway_error.ts";
import { readBodyBytes } from "../request/body.ts";
import { FILE_LIMITS, type FileKind, kindOf } from "../documents/limits.ts";

export const PURPOSES = ["user_data", "file-extract", "assistants"] as const;

export interface Upload {
  filename: string;
  kind: FileKind;
  bytes: Uint8Array;
  purpose: string;
}

function multipartError(detail: string): GatewayError {
  return new GatewayError("invalid_multipart", { detail });
}

export async function readUpload(req: Request): Promise<Upload> {
  const contentType = req.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;.*boundary=/i.test(contentType)) {
    throw multipartError("Нужно тело multipart/form-data с границей (boundary).");
  }
  let raw: Uint8Array;
  try {
    raw = await readBodyBytes(req, FILE_LIMITS.maxFileBytes + FILE_LIMITS.multipartSlackBytes);
  } catch (err) {
    if (err instanceof GatewayError && err.code === "request_body_too_large") {
      throw new GatewayError("file_too_large");
    }
    throw err;
  }
  let form: FormData;
  try {
    form = await new Response(raw as Uint8Array<ArrayBuffer>, { headers: { "content-type": contentType } })
      .formData();
  } catch {
    throw multipartError("Тело multipart/form-data повреждено.");
  }
  // Parsing 10 MiB takes ~50 ms in one block (Deno's parser, measured): let waiting requests run before the
  // next block (the copy of the file, then extraction), so the stalls do not add up.
  await yieldToLoop();
  let file: File | undefined;
  const extras: [string, FormDataEntryValue][] = [];
  for (const [name, value] of form.entries()) {
    if (name === "file") {
      if (file !== undefined) throw multipartError("Часть file передана больше одного раза.");
      if (typeof value === "string") throw multipartError("Часть file должна быть файлом с именем.");
      file = value;
    } else extras.push([name, value]);
  }
  if (extras.length > 1) throw multipartError("Кроме file допускается не более одного поля (purpose).");
  let purpose = "user_data";
  const extra = extras[0];
  if (extra) {
    if (extra[0] !== "purpose" || typeof extra[1] !== "string") {
      throw multipartError(`Неизвестное поле ${JSON.stringify(extra[0])}; допускается только purpose.`);
    }
    purpose = extra[1].trim();
    if (!(PURPOSES as readonly string[]).includes(purpose)) {
      throw new GatewayError("validation_error", {
        param: "purpose",
        detail: "purpose: user_data, file-extract или assistants.",
      });
    }
  }
  if (file === undefined) throw multipartError("Нет части file.");
  const filename = cleanFilename(file.name);
  const kind = kindOf(filename);
  if (kind === undefined) throw new GatewayError("file_type_unsupported", { param: "file" });
  if (file.size === 0) throw new GatewayError("file_empty", { param: "file" });
  if (file.size > FILE_LIMITS.maxFileBytes) throw new GatewayError("file_too_large", { param: "file" });
  const bytes = new Uint8Array(await file.arrayBuffer());
  await yieldToLoop();
  return { filename, kind, bytes, purpose };
}

const yieldToLoop = () => new Promise<void>((r) => setTimeout(r, 0));

/** The last path component, without control characters, at most 255 characters. */
export function cleanFilename(name: string): string {
  // deno-lint-ignore no-control-regex
  const base = name.split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  return [...base].slice(-255).join("");
}

/** `Content-Disposition: attachment` with an ASCII fallback and the exact name as RFC 5987 `filename*`. */
export function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%;]/g, "_") || "file";
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
