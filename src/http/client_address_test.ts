import assert from "node:assert/strict";
import { parseCidrList } from "../util/ip.ts";
import { ClientAddresses } from "./client_address.ts";

Deno.test("client address: no trusted proxies → the peer, X-Forwarded-For ignored", () => {
  const a = new ClientAddresses([]);
  assert.equal(a.resolve("198.51.100.1", null), "198.51.100.1");
  assert.equal(a.resolve("198.51.100.1", "203.0.113.7"), "198.51.100.1");
  assert.equal(a.resolve("::ffff:198.51.100.1", "203.0.113.7"), "198.51.100.1");
  assert.equal(a.resolve("2001:db8:0:1::5", null), "2001:db8:0:1::/64");
});

Deno.test("client address: an untrusted peer's X-Forwarded-For is ignored", () => {
  const a = new ClientAddresses(parseCidrList("10.0.0.0/8"));
  assert.equal(a.resolve("198.51.100.1", "203.0.113.7"), "198.51.100.1");
});

Deno.test("client address: through trusted proxies, the right-most untrusted hop", () => {
  const a = new ClientAddresses(parseCidrList("10.0.0.0/8, fd00::/8"));
  assert.equal(a.resolve("10.0.0.1", "203.0.113.7"), "203.0.113.7");
  assert.equal(a.resolve("10.0.0.1", null), "10.0.0.1", "no header: the proxy itself");
  // A client-written value on the left cannot choose the address.
  assert.equal(a.resolve("10.0.0.1", "1.1.1.1, 203.0.113.7"), "203.0.113.7");
  // Several trusted hops (one header line each, joined by the runtime with ", ").
  assert.equal(a.resolve("10.0.0.1", "1.1.1.1, 203.0.113.7, 10.2.2.2, fd00::9"), "203.0.113.7");
  assert.equal(a.resolve("::ffff:10.0.0.1", "203.0.113.7:5555"), "203.0.113.7", "mapped peer, port in entry");
  assert.equal(a.resolve("fd00::1", "[2001:db8:5:6::7]:443"), "2001:db8:5:6::/64");
  // Every hop trusted: the left-most one.
  assert.equal(a.resolve("10.0.0.1", "10.3.3.3, 10.2.2.2"), "10.3.3.3");
  // A malformed entry ends the walk: the last trusted hop counts.
  assert.equal(a.resolve("10.0.0.1", "203.0.113.7, garbage"), "10.0.0.1");
  assert.equal(a.resolve("10.0.0.1", "garbage, 10.2.2.2"), "10.2.2.2");
  assert.equal(a.resolve("10.0.0.1", ""), "10.0.0.1");
});

Deno.test("client address: HTTPS from the URL, or from the X-Forwarded-Proto of a trusted proxy only", () => {
  const a = new ClientAddresses(parseCidrList("10.0.0.0/8"));
  const http = new URL("http://gw.example/dashboard");
  assert.equal(a.isHttps(new URL("https://gw.example/dashboard"), "198.51.100.1", null), true);
  assert.equal(a.isHttps(http, "198.51.100.1", null), false);
  assert.equal(a.isHttps(http, "198.51.100.1", "https"), false, "an untrusted peer's header");
  assert.equal(a.isHttps(http, "10.0.0.1", "https"), true);
  assert.equal(a.isHttps(http, "10.0.0.1", "HTTPS"), true);
  assert.equal(a.isHttps(http, "10.0.0.1", "http"), false);
  assert.equal(a.isHttps(http, "10.0.0.1", "https, http"), false, "the last value: the proxy next to us");
  assert.equal(a.isHttps(http, "10.0.0.1", "http, https"), true);
  assert.equal(new ClientAddresses([]).isHttps(http, "10.0.0.1", "https"), false, "no trusted proxies");
});
