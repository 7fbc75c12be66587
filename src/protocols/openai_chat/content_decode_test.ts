import assert from "node:assert/strict";
import { GatewayError } from "../../errors/gateway_error.ts";
import { decodeContent, decodeImageUrl, decodePart, decodeTextContent } from "./content_decode.ts";

const rejects = (f: () => unknown, param: string) =>
  assert.throws(
    f,
    (e: unknown) => e instanceof GatewayError && e.code === "invalid_request" && e.param === param,
  );

Deno.test("decodeImageUrl parses data URLs and http(s) URLs", () => {
  assert.deepEqual(decodeImageUrl("data:image/webp;base64,UklG", "p"), {
    type: "image",
    mediaType: "image/webp",
    data: "UklG",
  });
  assert.deepEqual(decodeImageUrl("HTTP://x.test/i.png", "p"), { type: "image", url: "HTTP://x.test/i.png" });
  rejects(() => decodeImageUrl("data:image/png;charset=x;base64,AA", "p"), "p");
  rejects(() => decodeImageUrl("file:///etc/passwd", "p"), "p");
  rejects(() => decodeImageUrl("data:image/png,%E0%A4%A", "p"), "p");
});

Deno.test("decodePart allows refusal parts in assistant messages only", () => {
  assert.deepEqual(decodePart({ type: "refusal", refusal: "no" }, "assistant", "p"), {
    type: "text",
    text: "no",
  });
  rejects(() => decodePart({ type: "refusal", refusal: "no" }, "user", "p"), "p.type");
  rejects(
    () => decodePart({ type: "image_url", image_url: { url: "https://a/b" } }, "assistant", "p"),
    "p.type",
  );
  rejects(
    () => decodePart({ type: "file", file: { file_data: "data:application/pdf;base64,AA" } }, "user", "p"),
    "p.file.file_id",
  );
  rejects(() => decodePart({ type: "text", text: 1 }, "user", "p"), "p.text");
  rejects(() => decodePart("text", "user", "p"), "p");
});

Deno.test("decodeContent and decodeTextContent", () => {
  assert.deepEqual(decodeContent("x", "user", "c"), [{ type: "text", text: "x" }]);
  assert.equal(decodeTextContent([{ type: "text", text: "a" }, { type: "text", text: "b" }], "c"), "ab");
  rejects(
    () => decodeTextContent([{ type: "image_url", image_url: { url: "https://a/b" } }], "c"),
    "c.0.type",
  );
  rejects(() => decodeContent(null, "user", "c"), "c");
});
