/**
 * The monitoring kit (deploy/prometheus/, docs/operations.md "Monitoring"): the scrape config, the blackbox
 * module and the alert rules parse and have the shape Prometheus needs, and every metric the rules name is
 * one a running gateway exposes on GET /metrics (a family declared by `# TYPE` counts without samples), so a
 * renamed or removed metric fails here instead of silently never alerting.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { ADMIN_TOKEN, post, withGateway } from "../support/harness.ts";
import { parseExposition } from "../support/prometheus_text.ts";

const DIR = new URL("../../deploy/prometheus/", import.meta.url);
const read = async (name: string): Promise<any> => parse(await Deno.readTextFile(new URL(name, DIR)));

/** Series the rules may use that come from elsewhere than the gateway, with where. */
const NOT_THE_GATEWAYS: Record<string, string> = {
  up: "Prometheus, per scrape target",
  probe_success: "the blackbox exporter's probe of /readyz",
};

/** PromQL words that are not metric names: aggregations, set and comparison operators, modifiers, numbers. */
const KEYWORDS = new Set([
  "sum",
  "min",
  "max",
  "avg",
  "group",
  "stddev",
  "stdvar",
  "count",
  "count_values",
  "bottomk",
  "topk",
  "quantile",
  "limitk",
  "limit_ratio",
  "and",
  "or",
  "unless",
  "atan2",
  "bool",
  "offset",
  "inf",
  "nan",
]);
/** Modifiers followed by a parenthesised list of label names (optional after group_left/right). */
const LABEL_LISTS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);

const TOKEN =
  /\s+|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`|\{[^}]*\}|\[[^\]]*\]|[a-zA-Z_:][a-zA-Z0-9_:]*|\d[\w.]*|./gs;

/** The metric names of a PromQL expression: identifiers that are neither functions, keywords, label names
 *  (in `{…}` matchers or `by (…)` lists), durations nor numbers. Strings, matchers and ranges are single
 *  tokens here, so nothing inside them is taken for a name. */
function metricNames(expr: string): string[] {
  const tokens = (expr.match(TOKEN) ?? []).filter((t) => !/^\s+$/.test(t));
  const names: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!/^[a-zA-Z_:]/.test(t)) continue;
    const next = tokens[i + 1];
    if (LABEL_LISTS.has(t.toLowerCase())) {
      if (next !== "(") continue;
      i = tokens.indexOf(")", i + 1); // skip the label list
      if (i < 0) throw new Error(`unclosed label list in ${expr}`);
      continue;
    }
    if (KEYWORDS.has(t.toLowerCase()) || next === "(") continue; // an operator or a function call
    names.push(t);
  }
  return [...new Set(names)];
}

/** Whether a sample name belongs to an exposed family: the family itself, or a histogram's or summary's
 *  series (`_bucket` only for a histogram). */
function exposed(name: string, types: Map<string, string>): boolean {
  if (types.has(name)) return true;
  const m = name.match(/^(.*)_(bucket|sum|count)$/);
  if (!m) return false;
  const type = types.get(m[1]!);
  return type === "histogram" || (type === "summary" && m[2] !== "bucket");
}

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: string };
  annotations: { summary: string; description?: string };
}

async function alertRules(): Promise<Rule[]> {
  const doc = await read("alerts.yml");
  assert.ok(Array.isArray(doc.groups) && doc.groups.length > 0, "alerts.yml: groups");
  const groupNames = doc.groups.map((g: { name: string }) => g.name);
  assert.equal(new Set(groupNames).size, groupNames.length, "group names are unique");
  const rules: Rule[] = [];
  for (const group of doc.groups) {
    assert.equal(typeof group.name, "string");
    assert.ok(Array.isArray(group.rules) && group.rules.length > 0, `${group.name}: rules`);
    for (const rule of group.rules) {
      const at = `${group.name}/${rule.alert}`;
      assert.deepEqual(Object.keys(rule).sort(), ["alert", "annotations", "expr", "for", "labels"], at);
      assert.match(rule.alert, /^[A-Z][A-Za-z0-9]+$/, at);
      assert.equal(typeof rule.expr, "string", at);
      assert.match(rule.for, /^\d+[smh]$/, at);
      assert.ok(["page", "ticket"].includes(rule.labels.severity), `${at}: severity`);
      assert.ok(typeof rule.annotations.summary === "string" && rule.annotations.summary.length > 0, at);
      rules.push(rule);
    }
  }
  const names = rules.map((r) => r.alert);
  assert.equal(new Set(names).size, names.length, "alert names are unique");
  return rules;
}

Deno.test("metricNames: functions, aggregations, label lists, matchers, ranges and numbers are not names", () => {
  assert.deepEqual(metricNames('up{job="gateway"} == 0'), ["up"]);
  assert.deepEqual(
    metricNames(
      'sum by (instance, family) (rate(a_total{status=~"5..", x="sum(b)"}[5m])) / on (instance) ' +
        "group_left (family) sum without (code) (increase(c_total[1h] offset 5m)) > 0.05 and d > bool 1e3",
    ),
    ["a_total", "c_total", "d"],
  );
  assert.deepEqual(
    metricNames("histogram_quantile(0.99, sum(rate(h_seconds_bucket[5m])) by (le)) unless absent(x)"),
    ["h_seconds_bucket", "x"],
  );
  const types = new Map([["h_seconds", "histogram"], ["s_seconds", "summary"], ["g", "gauge"]]);
  assert.ok(exposed("h_seconds_bucket", types) && exposed("s_seconds_count", types) && exposed("g", types));
  assert.ok(!exposed("s_seconds_bucket", types) && !exposed("g_count", types) && !exposed("h", types));
});

Deno.test("prometheus.yml scrapes /metrics with the admin token from a file and probes /readyz", async () => {
  const config = await read("prometheus.yml");
  assert.deepEqual(config.rule_files, ["alerts.yml"]);
  const jobs = new Map(config.scrape_configs.map((c: { job_name: string }) => [c.job_name, c]));
  const gateway: any = jobs.get("gateway");
  assert.equal(gateway.metrics_path, "/metrics");
  assert.equal(gateway.authorization.type, "Bearer");
  assert.equal(gateway.authorization.credentials_file, "/etc/prometheus/gateway_admin_token");
  assert.ok(gateway.static_configs[0].targets.length > 0);
  const readyz: any = jobs.get("gateway-readyz");
  assert.equal(readyz.metrics_path, "/probe");
  assert.ok(readyz.static_configs[0].targets.every((t: string) => new URL(t).pathname === "/readyz"));
  const blackbox = await read("blackbox.yml");
  const module = blackbox.modules[readyz.params.module[0]];
  assert.equal(module.prober, "http");
  assert.deepEqual(module.http.valid_status_codes, [200]);

  // Every job a rule selects is one of these jobs.
  for (const rule of await alertRules()) {
    for (const [, job] of rule.expr.matchAll(/\bjob\s*=\s*"([^"]*)"/g)) {
      assert.ok(jobs.has(job), `${rule.alert}: job ${job} is not scraped`);
    }
  }
});

Deno.test("every metric the alert rules name is exposed by a running gateway's /metrics", async () => {
  const rules = await alertRules();
  await withGateway(async (t) => {
    // A few requests of each kind, so the labelled families have samples too.
    const { key } = await t.newKey("5.00");
    for (const model of ["k3", "theta3.7-plus"]) {
      const res = await post(`${t.url}/v1/chat/completions`, key, {
        model,
        max_tokens: 20,
        messages: [{ role: "user", content: "Привет [[sim:words=3]]" }],
      });
      assert.equal(res.status, 200, await res.text());
    }
    await t.gw.app.accounts.ledger.flush();
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(res.status, 200);
    const { types } = parseExposition(await res.text());

    const missing = (expr: string) =>
      metricNames(expr).filter((name) => !(name in NOT_THE_GATEWAYS) && !exposed(name, types));
    for (const rule of rules) {
      assert.ok(metricNames(rule.expr).length > 0, `${rule.alert}: no metric found in ${rule.expr}`);
      assert.deepEqual(missing(rule.expr), [], `${rule.alert}: not exposed by the gateway`);
    }
    // The check can fail: a misspelt family and a suffix the family's type does not have are caught.
    assert.deepEqual(missing("rate(gateway_request_total[5m]) + gateway_held_usd_count"), [
      "gateway_request_total",
      "gateway_held_usd_count",
    ]);
  });
});
