/**
 * Messages between the gateway and an extraction process or worker. One job at a time per host:
 * the job carries the file; the host answers with one `section` per section in order, then `done`,
 * or one `error`. Errors travel as (code, detail) and become the same GatewayError as before on the
 * gateway's side; an unexpected exception in the host is file_unreadable, as it always was, and a
 * runtime resource failure (string or buffer too large for V8) is file_limit_exceeded.
 */
import { GatewayError } from "../errors/gateway_error.ts";
import type { FileKind } from "./limits.ts";

export interface JobHeader {
  id: number;
  fileId: string;
  kind: FileKind;
}

export type Reply =
  | { t: "section"; id: number; anchor: string; text: string }
  | { t: "done"; id: number }
  | { t: "error"; id: number; code: HostErrorCode; detail?: string };

/** The only codes an extraction may answer with. */
export type HostErrorCode = "file_limit_exceeded" | "file_unreadable";

const RESOURCE =
  /Invalid string length|Array buffer allocation failed|Invalid typed array length|Invalid array length/;

export function errorReply(id: number, err: unknown): Reply {
  if (err instanceof GatewayError && (err.code === "file_limit_exceeded" || err.code === "file_unreadable")) {
    return { t: "error", id, code: err.code, ...(err.detail === undefined ? {} : { detail: err.detail }) };
  }
  if (err instanceof RangeError && RESOURCE.test(err.message)) {
    return { t: "error", id, code: "file_limit_exceeded", detail: "Документ слишком велик для обработки." };
  }
  console.error(`file extraction failed: ${err instanceof Error ? err.stack : err}`);
  return { t: "error", id, code: "file_unreadable" };
}

export function replyError(r: { code: string; detail?: string }): GatewayError {
  const code = r.code === "file_limit_exceeded" ? "file_limit_exceeded" : "file_unreadable";
  return new GatewayError(code, typeof r.detail === "string" ? { detail: r.detail } : {});
}
