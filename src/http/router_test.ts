import assert from "node:assert/strict";
import { Router } from "./router.ts";

const router = new Router([
  { method: "POST", path: "/v1/messages", envelope: "anthropic", auth: "key", handler: "messages" },
  { method: "GET", path: "/v1/files", envelope: "detail", auth: "key", handler: "list" },
  { method: "POST", path: "/v1/files", envelope: "detail", auth: "key", handler: "upload" },
  { method: "GET", path: "/v1/files/:id", envelope: "detail", auth: "key", handler: "get" },
  { method: "DELETE", path: "/v1/files/:id", envelope: "detail", auth: "key", handler: "delete" },
  { method: "GET", path: "/v1/files/:id/content", envelope: "detail", auth: "key", handler: "content" },
]);

Deno.test("Router matches exact paths and captures segments", () => {
  const m = router.match("POST", "/v1/messages");
  assert.equal(m.kind === "found" && m.route.handler, "messages");
  const g = router.match("GET", "/v1/files/file_abc");
  assert.deepEqual(g.kind === "found" && [g.route.handler, g.params], ["get", { id: "file_abc" }]);
  const c = router.match("GET", "/v1/files/file_abc/content");
  assert.equal(c.kind === "found" && c.route.handler, "content");
});

Deno.test("Router tells 404 from 405 and lists allowed methods", () => {
  assert.equal(router.match("POST", "/v1/nothing").kind, "not_found");
  assert.equal(router.match("GET", "/v1/files/").kind, "not_found");
  const m = router.match("GET", "/v1/messages");
  assert.deepEqual(m, { kind: "method_not_allowed", allow: ["POST"], envelope: "anthropic" });
  const f = router.match("PUT", "/v1/files/x");
  assert.deepEqual(f.kind === "method_not_allowed" && f.allow.sort(), ["DELETE", "GET"]);
});
