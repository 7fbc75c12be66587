import assert from "node:assert/strict";
import { parseExposition } from "../../tests/support/prometheus_text.ts";
import { Registry } from "./prometheus.ts";

Deno.test("registry renders counters, gauges, histograms and collected values as valid exposition text", () => {
  const r = new Registry();
  const c = r.counter("t_requests_total", "Requests.\nSecond line \\ backslash.", ["family", "status"]);
  const g = r.gauge("t_open", "Open.");
  const h = r.histogram("t_seconds", "Durations.", ["family"], [0.1, 1, 10]);
  r.collect("t_held", "Held.", { kind: "gauge", read: () => 2.5 });
  r.collect("t_batch", "Batches.", { kind: "summary", read: () => ({ sum: 12, count: 3 }) });
  c.labels("alpha", "200").inc();
  c.labels("alpha", "200").inc(2);
  c.labels('we"ird\\fam\nily', "500").inc();
  g.labels().inc();
  g.labels().inc();
  g.labels().dec();
  for (const v of [0.05, 0.1, 0.5, 5, 50]) h.labels("beta").observe(v);
  const text = r.render();
  const e = parseExposition(text);
  assert.equal(e.types.get("t_requests_total"), "counter");
  assert.equal(e.types.get("t_seconds"), "histogram");
  assert.equal(e.types.get("t_batch"), "summary");
  assert.equal(e.get("t_requests_total", { family: "alpha", status: "200" }), 3);
  assert.equal(e.get("t_requests_total", { family: 'we"ird\\fam\nily', status: "500" }), 1);
  assert.equal(e.get("t_open"), 1);
  // le bounds are inclusive; buckets cumulative; +Inf = count.
  assert.equal(e.get("t_seconds_bucket", { family: "beta", le: "0.1" }), 2);
  assert.equal(e.get("t_seconds_bucket", { family: "beta", le: "1" }), 3);
  assert.equal(e.get("t_seconds_bucket", { family: "beta", le: "10" }), 4);
  assert.equal(e.get("t_seconds_bucket", { family: "beta", le: "+Inf" }), 5);
  assert.equal(e.get("t_seconds_count", { family: "beta" }), 5);
  assert.equal(e.get("t_seconds_sum", { family: "beta" }), 0.05 + 0.1 + 0.5 + 5 + 50);
  assert.equal(e.get("t_held"), 2.5);
  assert.equal(e.get("t_batch_sum"), 12);
  assert.equal(e.get("t_batch_count"), 3);
  assert.match(text, /^# HELP t_requests_total Requests\.\\nSecond line \\\\ backslash\.$/m);
});

Deno.test("a labelled cell is the same object on every lookup; label counts and names are checked", () => {
  const r = new Registry();
  const c = r.counter("t_total", "T.", ["a", "b", "c"]);
  assert.equal(c.labels("x", "y", "z"), c.labels("x", "y", "z"));
  assert.notEqual(c.labels("x", "y", "z"), c.labels("x", "y", "w"));
  assert.throws(() => c.labels("x", "y"), /3 label values expected/);
  assert.throws(() => r.counter("t_total", "again"), /registered twice/);
  assert.throws(() => r.gauge("bad-name", "B."), /invalid metric or label name/);
  assert.throws(() => r.histogram("t_h", "H.", ["le"], [1]), /reserved/);
  assert.throws(() => r.histogram("t_h", "H.", [], [1, 1]), /increasing/);
});

Deno.test("the test reader refuses what is not exposition text", () => {
  const ok = "# HELP a_total A.\n# TYPE a_total counter\na_total 1\n";
  assert.equal(parseExposition(ok).get("a_total"), 1);
  for (
    const bad of [
      "# TYPE a_total counter\na_total 1", // no final newline
      "# TYPE a_total counter\na_total one\n",
      '# TYPE a_total counter\na_total{x="1""} 1\n',
      "# TYPE a_total counter\n# TYPE a_total counter\na_total 1\n",
      "a_total 1\n", // untyped
      "# TYPE a counter\n# TYPE b counter\na 1\nb 1\na 2\n", // not contiguous
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', // not cumulative
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', // no +Inf
    ]
  ) assert.throws(() => parseExposition(bad), Error, bad);
});
