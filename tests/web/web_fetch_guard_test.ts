/**
 * The SSRF table of /v1/alpha/fetch (§8.3): URL rules, destination names and resolved addresses.
 * DNS is a fake table here (never real DNS); the address policy and the port set are the production
 * ones. Gateway-level cases use only inputs refused before any DNS lookup, so no traffic leaves loopback.
 */
import assert from "node:assert/strict";
import { fetchPage, PRODUCTION_FETCH } from "../../src/web/fetch_service.ts";
import { isPublicAddress, nonPublicReason } from "../../src/web/ip_ranges.ts";
import { guardDestination, PRODUCTION_GUARD, type Resolver } from "../../src/web/resolve_guard.ts";
import { PRODUCTION_PORTS, UrlRejected } from "../../src/web/url_rules.ts";
import { post, startTestGateway } from "../support/harness.ts";

const DNS: Record<string, string[]> = {
  "example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "news.example.org": ["151.101.1.69"],
  "xn--e1afmkfd.xn--p1ai": ["95.213.4.2"], // пример.рф
  "ten.example.com": ["10.1.2.3"],
  "rfc1918.example.com": ["172.16.5.4"],
  "router.example.com": ["192.168.1.1"],
  "cgnat.example.com": ["100.64.0.1"],
  "loop.example.com": ["127.0.0.1"],
  "127.0.0.1.nip.io": ["127.0.0.1"],
  "loop6.example.com": ["::1"],
  "mapped.example.com": ["::ffff:127.0.0.1"],
  "mapped-hex.example.com": ["::ffff:7f00:1"],
  "compat.example.com": ["::127.0.0.1"],
  "imds.example.com": ["169.254.169.254"],
  "imds6.example.com": ["fd00:ec2::254"],
  "nat64.example.com": ["64:ff9b::a00:1"],
  "teredo.example.com": ["2001:0:4136:e378:8000:63bf:3fff:fdd2"],
  "sixtofour.example.com": ["2002:7f00:1::1"],
  "ula.example.com": ["fc00::1"],
  "ll6.example.com": ["fe80::1"],
  "zero.example.com": ["0.0.0.0"],
  "unspec6.example.com": ["::"],
  "bench.example.com": ["198.18.0.1"],
  "doc.example.com": ["192.0.2.1"],
  "doc6.example.com": ["2001:db8::1"],
  "bcast.example.com": ["255.255.255.255"],
  "mcast.example.com": ["224.0.0.1"],
  "mcast6.example.com": ["ff02::1"],
  "mixed.example.com": ["93.184.215.14", "10.0.0.1"],
  "mixed6.example.com": ["93.184.215.14", "::1"],
  "garbage.example.com": ["not-an-ip"],
};
const fakeDns: Resolver = (name, type) =>
  Promise.resolve((DNS[name] ?? []).filter((ip) => (type === "AAAA") === ip.includes(":")));
const deps = { ...PRODUCTION_GUARD, resolver: fakeDns };

type Expect = "ok" | "malformed" | "rejected";
async function verdict(raw: string): Promise<Expect> {
  try {
    await guardDestination(raw, deps);
    return "ok";
  } catch (err) {
    if (err instanceof UrlRejected) return err.verdict;
    throw err;
  }
}

const HOSTILE: [string, Expect][] = [
  // IPv4 literals in every notation
  ["http://127.0.0.1/", "rejected"],
  ["http://2130706433/", "rejected"],
  ["http://0177.0.0.1/", "rejected"],
  ["http://0x7f.1/", "rejected"],
  ["http://127.1/", "rejected"],
  ["http://0x7f000001/", "rejected"],
  ["http://017700000001/", "rejected"],
  ["http://0/", "rejected"],
  ["http://0.0.0.0/", "rejected"],
  ["http://169.254.169.254/latest/meta-data/", "rejected"],
  ["http://10.0.0.1/", "rejected"],
  ["http://8.8.8.8/", "rejected"], // even a public IP literal: names only
  ["http://127%2E0%2E0%2E1/", "rejected"], // encoded dots
  ["http://127%2e1/", "rejected"],
  ["http://127。0。0。1/", "rejected"], // ideographic full stops
  ["http://１２７.０.０.１/", "rejected"], // full-width digits
  // IPv6 literals
  ["http://[::1]/", "rejected"],
  ["http://[::]/", "rejected"],
  ["http://[::ffff:127.0.0.1]/", "rejected"],
  ["http://[::ffff:7f00:1]/", "rejected"],
  ["http://[fd00:ec2::254]/", "rejected"],
  ["http://[fe80::1%25eth0]/", "rejected"], // zone id: unparsable, still an IP literal
  ["http://[2606:4700::1111]/", "rejected"],
  // names
  ["http://metadata.google.internal/computeMetadata/v1/", "rejected"],
  ["http://metadata/", "rejected"],
  ["http://metadata.goog/", "rejected"],
  ["http://instance-data.ec2.internal/", "rejected"],
  ["http://localhost/", "rejected"],
  ["http://localhost./", "rejected"],
  ["http://localhost%2E/", "rejected"],
  ["http://foo.localhost/", "rejected"],
  ["http://printer.local/", "rejected"],
  ["http://nas.lan/", "rejected"],
  ["http://router.home/", "rejected"],
  ["http://db.internal/", "rejected"],
  ["http://intranet/", "rejected"],
  ["http://example.com./", "rejected"], // trailing dot
  ["http://my_host.example.com/", "rejected"],
  ["http://аpple.com/", "rejected"], // Cyrillic а + Latin: mixed-script homograph
  ["http://аррӏе.com/", "rejected"], // whole-script Cyrillic look-alike of apple
  ["http://xn--80ak6aa92e.com/", "rejected"], // the same, already in punycode
  ["http://paypal.com.127.0.0.1/", "rejected"], // WHATWG: numeric last label (IP form), unparsable
  // names resolving to non-public addresses (fake DNS)
  ["http://ten.example.com/", "rejected"],
  ["http://rfc1918.example.com/", "rejected"],
  ["http://router.example.com/", "rejected"],
  ["http://cgnat.example.com/", "rejected"],
  ["http://loop.example.com/", "rejected"],
  ["http://127.0.0.1.nip.io/", "rejected"],
  ["https://loop6.example.com/", "rejected"],
  ["http://mapped.example.com/", "rejected"],
  ["http://mapped-hex.example.com/", "rejected"],
  ["http://compat.example.com/", "rejected"],
  ["http://imds.example.com/", "rejected"],
  ["http://imds6.example.com/", "rejected"],
  ["http://nat64.example.com/", "rejected"],
  ["http://teredo.example.com/", "rejected"],
  ["http://sixtofour.example.com/", "rejected"],
  ["http://ula.example.com/", "rejected"],
  ["http://ll6.example.com/", "rejected"],
  ["http://zero.example.com/", "rejected"],
  ["http://unspec6.example.com/", "rejected"],
  ["http://bench.example.com/", "rejected"],
  ["http://doc.example.com/", "rejected"],
  ["http://doc6.example.com/", "rejected"],
  ["http://bcast.example.com/", "rejected"],
  ["http://mcast.example.com/", "rejected"],
  ["http://mcast6.example.com/", "rejected"],
  ["http://mixed.example.com/", "rejected"], // one bad address poisons the name
  ["http://mixed6.example.com/", "rejected"],
  ["http://garbage.example.com/", "rejected"], // unparsable answer: fail closed
  ["http://nxdomain.example.com/", "rejected"],
  // userinfo tricks
  ["http://public.example@127.0.0.1/", "malformed"],
  ["http://user:pass@example.com/", "malformed"],
  ["http://@example.com/", "malformed"],
  ["http://example.com\\@127.0.0.1/", "malformed"],
  // ports
  ["http://example.com:8080/", "rejected"],
  ["https://example.com:22/", "rejected"],
  ["http://example.com:0/", "rejected"],
  ["http://example.com:6379/", "rejected"],
  // schemes
  ["file:///etc/passwd", "rejected"],
  ["gopher://example.com:70/_GET", "rejected"],
  ["ftp://example.com/", "rejected"],
  ["dict://example.com:11211/", "rejected"],
  ["javascript:alert(1)", "rejected"],
  ["data:text/html,hi", "rejected"],
  ["ws://example.com/", "rejected"],
  // syntax
  ["http://example.com/" + "a".repeat(2100), "malformed"],
  ["http://example.com/a b", "malformed"],
  [" http://example.com/", "malformed"],
  ["http://exa\tmple.com/", "malformed"],
  ["http://example.com/\n", "malformed"],
  ["http://example.com/#frag", "malformed"],
  ["http://example.com/#", "malformed"],
  ["http:///example.com/", "malformed"],
  ["http:example.com", "malformed"],
  ["example.com", "malformed"],
  ["/etc/passwd", "malformed"],
  ["", "malformed"],
];

const ALLOWED: string[] = [
  "http://example.com/",
  "https://example.com/path?q=1",
  "http://example.com:80/",
  "https://example.com:443/",
  "https://example.com:80/",
  "http://EXAMPLE.com/",
  "https://news.example.org/a/b.html",
  "https://пример.рф/", // a single-script IDN is fine
  "http://ex%61mple.com/",
  "https://example.com/" + "a".repeat(2000),
];

Deno.test("guard: the SSRF table (every hostile input refused with the expected verdict)", async () => {
  assert.ok(HOSTILE.filter(([, v]) => v !== "ok").length >= 40);
  const wrong: string[] = [];
  for (const [url, expected] of HOSTILE) {
    const got = await verdict(url);
    if (got !== expected) wrong.push(`${JSON.stringify(url)}: expected ${expected}, got ${got}`);
  }
  assert.deepEqual(wrong, []);
});

Deno.test("guard: public names on 80/443 pass, with their checked addresses", async () => {
  for (const url of ALLOWED) assert.equal(await verdict(url), "ok", url);
  const d = await guardDestination("https://example.com/x", deps);
  assert.deepEqual(d.addresses, DNS["example.com"]);
  assert.equal(d.host, "example.com");
  assert.equal(d.port, 443);
  assert.equal(d.tls, true);
});

Deno.test("guard: the address policy (IPv4 blocklist, IPv6 global-unicast allowlist)", () => {
  const table: [string, boolean][] = [
    ["93.184.215.14", true],
    ["8.8.8.8", true],
    ["1.1.1.1", true],
    ["100.63.255.255", true],
    ["100.128.0.0", true],
    ["172.15.255.255", true],
    ["172.32.0.0", true],
    ["198.17.255.255", true],
    ["198.20.0.0", true],
    ["223.255.255.255", true],
    ["2606:4700:4700::1111", true],
    ["2a00:1450:4001:80b::200e", true],
    ["0.0.0.0", false],
    ["0.1.2.3", false],
    ["10.0.0.1", false],
    ["10.255.255.255", false],
    ["100.64.0.0", false],
    ["100.127.255.255", false],
    ["127.0.0.1", false],
    ["127.255.255.254", false],
    ["169.254.169.254", false],
    ["172.16.0.1", false],
    ["172.31.255.255", false],
    ["192.0.0.170", false],
    ["192.0.2.1", false],
    ["192.88.99.1", false],
    ["192.168.0.1", false],
    ["198.18.0.1", false],
    ["198.19.255.255", false],
    ["198.51.100.7", false],
    ["203.0.113.9", false],
    ["224.0.0.1", false],
    ["239.255.255.250", false],
    ["240.0.0.1", false],
    ["255.255.255.255", false],
    ["::", false],
    ["::1", false],
    ["::ffff:127.0.0.1", false],
    ["::ffff:8.8.8.8", false], // mapped forms are refused even for public IPv4
    ["::ffff:7f00:1", false],
    ["::127.0.0.1", false],
    ["::ffff:0:7f00:1", false],
    ["64:ff9b::808:808", false],
    ["64:ff9b:1::1", false],
    ["100::1", false],
    ["2001::1", false],
    ["2001:db8::1", false],
    ["2002:7f00:1::1", false],
    ["3fff::1", false],
    ["fc00::1", false],
    ["fd00:ec2::254", false],
    ["fe80::1", false],
    ["fec0::1", false],
    ["ff02::1", false],
    // not strict addresses: fail closed
    ["127.1", false],
    ["0177.0.0.1", false],
    ["2130706433", false],
    ["[::1]", false],
    ["fe80::1%eth0", false],
    ["1:2:3:4:5:6:7:8:9", false],
    ["", false],
  ];
  for (const [ip, allowed] of table) {
    assert.equal(isPublicAddress(ip), allowed, `${ip}: ${nonPublicReason(ip)}`);
  }
});

Deno.test("guard: the production fetch configuration has no relaxed switch", () => {
  assert.ok(Object.isFrozen(PRODUCTION_FETCH) && Object.isFrozen(PRODUCTION_GUARD));
  assert.equal(PRODUCTION_FETCH.policy, isPublicAddress);
  assert.equal(PRODUCTION_FETCH.ports, PRODUCTION_PORTS);
  assert.deepEqual([...PRODUCTION_PORTS].sort(), [443, 80]);
  assert.equal(PRODUCTION_FETCH.caCerts, undefined);
  assert.equal(PRODUCTION_FETCH.maxPageBytes, 2 * 1024 * 1024);
});

Deno.test("guard: fetchPage maps verdicts to codes (no network: refused before DNS)", async () => {
  const code = async (url: string) => {
    try {
      await fetchPage(url, { ...PRODUCTION_FETCH, resolver: fakeDns });
      return "ok";
    } catch (err: any) {
      return `${err.status} ${err.code}`;
    }
  };
  assert.equal(await code("http://127.0.0.1/"), "400 managed_service_destination_rejected");
  assert.equal(await code("http://ten.example.com/"), "400 managed_service_destination_rejected");
  assert.equal(await code("http://user@example.com/"), "400 invalid_managed_service_request");
  assert.equal(await code("gopher://example.com/"), "400 managed_service_destination_rejected");
});

Deno.test("fetch endpoint: bodies, 402, and destinations refused before any DNS lookup", async () => {
  const t = await startTestGateway();
  try {
    const { key } = await t.newKey("1.00");
    const call = async (body: unknown, k: string | null = key) => {
      const res = await post(t.url + "/v1/alpha/fetch", k, body);
      return { status: res.status, json: await res.json(), headers: res.headers };
    };
    const bad: [unknown, string | null][] = [
      ["{url:", null],
      ["[]", null],
      [{}, "url"],
      [{ uri: "https://example.com/" }, "uri"],
      [{ url: "https://example.com/", model: "k3" }, "model"],
      [{ url: "https://example.com/", stream: true }, "stream"],
      [{ url: 1 }, "url"],
      [{ url: "https://example.com/#x" }, "url"],
      [{ url: "http://public.example@127.0.0.1/" }, "url"],
      [{ url: "https://example.com/" + "a".repeat(2100) }, "url"],
    ];
    for (const [body, param] of bad) {
      const r = await call(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.json.error.code, "invalid_managed_service_request", JSON.stringify(body));
      assert.equal(r.json.error.param, param, JSON.stringify(body));
    }
    for (
      const url of [
        "http://127.0.0.1/",
        "http://2130706433/",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/",
        "http://localhost/",
        "http://printer.local/",
        "http://example.com:8080/",
        "file:///etc/passwd",
        "gopher://example.com/",
      ]
    ) {
      const r = await call({ url });
      assert.equal(r.status, 400, url);
      assert.equal(r.json.error.code, "managed_service_destination_rejected", url);
      assert.equal(r.json.error.param, "url", url);
      assert.equal(r.json.request_id, r.headers.get("request-id"));
    }
    const zero = await t.newKey("0.00");
    const broke = await call({ url: "http://127.0.0.1/" }, zero.key);
    assert.equal(broke.status, 402);
    assert.equal(broke.json.error.code, "insufficient_credit");
    assert.equal((await call({ url: "http://127.0.0.1/" }, null)).status, 401);
  } finally {
    await t.close();
  }
});
