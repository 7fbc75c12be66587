/** POST /v1/files with one `file` part (spec §4.3), as the file tests upload: the status and the JSON answer. */
import type { TestGateway } from "./harness.ts";

export async function upload(t: TestGateway, key: string, name: string, bytes: Uint8Array | string) {
  const fd = new FormData();
  fd.append("file", new File([bytes as Uint8Array<ArrayBuffer> | string], name));
  const res = await fetch(`${t.url}/v1/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: fd,
  });
  return { status: res.status, json: await res.json() as any };
}
