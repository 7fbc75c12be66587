import assert from "node:assert/strict";
import { cleanFilename, contentDisposition } from "./multipart.ts";

Deno.test("contentDisposition: ASCII fallback without quotes or separators, exact name in filename*", () => {
  assert.equal(
    contentDisposition('Отчёт "Q1"; 100%.txt'),
    `attachment; filename="_____ _Q1__ 100_.txt"; filename*=UTF-8''%D0%9E%D1%82%D1%87%D1%91%D1%82%20%22Q1%22%3B%20100%25.txt`,
  );
  assert.equal(
    contentDisposition("a'b(c).pdf"),
    `attachment; filename="a'b(c).pdf"; filename*=UTF-8''a%27b%28c%29.pdf`,
  );
});

Deno.test("cleanFilename: last path component, no control characters, at most 255 characters", () => {
  assert.equal(cleanFilename("C:\\Users\\x\\..\\doc.pdf"), "doc.pdf");
  assert.equal(cleanFilename("../../etc/pass\r\nwd.txt"), "passwd.txt");
  assert.equal(cleanFilename("a".repeat(300) + ".txt").length, 255);
  assert.ok(cleanFilename("a".repeat(300) + ".txt").endsWith(".txt"));
});
