/** HTTP handlers of /v1/files (spec §4.3). Every call, DELETE included, answers 402 at zero credit. */
import type { Account } from "../accounts/accounts.ts";
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { jsonResponse } from "../request/json.ts";
import type { KeyContext } from "../request/context.ts";
import { contentDisposition, readUpload } from "./multipart.ts";
import { fileObject, getOwnFile, uploadFile } from "./service.ts";

/** spec §4.3: every files call, DELETE included, answers 402 at zero credit. */
function admit(app: App, ctx: KeyContext): Account {
  if (app.accounts.available(ctx.account) <= 0n) throw new GatewayError("insufficient_credit");
  return ctx.account;
}

export async function postFile(app: App, ctx: KeyContext): Promise<Response> {
  const acc = admit(app, ctx);
  const upload = await readUpload(ctx.req);
  return jsonResponse(200, await uploadFile(app, acc, upload), ctx.requestId, ctx.headers);
}

export async function listFiles(app: App, ctx: KeyContext): Promise<Response> {
  const acc = admit(app, ctx);
  const files = await app.store.listFiles(acc.rec.id, app.now());
  return jsonResponse(200, { object: "list", data: files.map(fileObject) }, ctx.requestId, ctx.headers);
}

export async function getFile(app: App, ctx: KeyContext): Promise<Response> {
  const acc = admit(app, ctx);
  const f = await getOwnFile(app, acc, ctx.params.id ?? "");
  return jsonResponse(200, fileObject(f), ctx.requestId, ctx.headers);
}

export async function getFileContent(app: App, ctx: KeyContext): Promise<Response> {
  const acc = admit(app, ctx);
  const f = await getOwnFile(app, acc, ctx.params.id ?? "");
  const bytes = await app.store.getFileData(f);
  return new Response(bytes as Uint8Array<ArrayBuffer>, {
    status: 200,
    headers: {
      "content-type": f.contentType,
      "content-disposition": contentDisposition(f.filename),
      "x-content-type-options": "nosniff",
      "request-id": ctx.requestId,
      ...ctx.headers,
    },
  });
}

export async function deleteFile(app: App, ctx: KeyContext): Promise<Response> {
  const acc = admit(app, ctx);
  const f = await getOwnFile(app, acc, ctx.params.id ?? "");
  if (!(await app.store.deleteFile(acc.rec.id, f.id))) throw new GatewayError("file_not_found");
  return jsonResponse(200, { id: f.id, object: "file", deleted: true }, ctx.requestId, ctx.headers);
}
