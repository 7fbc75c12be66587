/** Shared bits of the SDK contract tests (tests/clients/sdk_*_test.ts): clients, models, assertions. */
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import type { TestGateway } from "./harness.ts";

/** One model of every family. */
export const FAMILY_MODELS: Record<string, string> = {
  alpha: "k3",
  beta: "beta-haiku-4-5",
  gamma: "gamma-2.5",
  eta: "delta-eta-4.6-medium",
  theta: "theta3.8-omni-flash",
};

export const RUSSIAN = /[а-яё]/i;

export function openaiClient(t: TestGateway, apiKey: string, prefix = ""): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${t.url}${prefix}/v1`, maxRetries: 0 });
}

export function anthropicClient(t: TestGateway, apiKey: string, prefix = ""): Anthropic {
  return new Anthropic({ apiKey, baseURL: `${t.url}${prefix}`, maxRetries: 0 });
}

/** A non-empty Russian answer. */
export function assertRussian(text: string | null | undefined, where: string) {
  assert.equal(typeof text, "string", `${where}: text is ${text}`);
  assert.ok(text!.trim().length > 0, `${where}: empty text`);
  assert.match(text!, RUSSIAN, `${where}: not Russian: ${text}`);
}

export function assertPositiveInt(n: unknown, where: string) {
  assert.equal(typeof n, "number", `${where}: ${n} is not a number`);
  assert.ok(Number.isInteger(n) && (n as number) > 0, `${where}: ${n} is not a positive integer`);
}

/** Chat Completions usage: positive counts, total = prompt + completion. */
export function assertChatUsage(u: any, where: string) {
  assert.ok(u, `${where}: no usage`);
  assertPositiveInt(u.prompt_tokens, `${where} prompt_tokens`);
  assertPositiveInt(u.completion_tokens, `${where} completion_tokens`);
  assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens, `${where} total_tokens`);
}

/** Responses usage: positive counts, total = input + output. */
export function assertResponsesUsage(u: any, where: string) {
  assert.ok(u, `${where}: no usage`);
  assertPositiveInt(u.input_tokens, `${where} input_tokens`);
  assertPositiveInt(u.output_tokens, `${where} output_tokens`);
  assert.equal(u.total_tokens, u.input_tokens + u.output_tokens, `${where} total_tokens`);
}

/** Messages usage: positive counts. */
export function assertMessagesUsage(u: any, where: string) {
  assert.ok(u, `${where}: no usage`);
  assertPositiveInt(u.input_tokens, `${where} input_tokens`);
  assertPositiveInt(u.output_tokens, `${where} output_tokens`);
}

/** JSON arguments of a tool call: an object. */
export function parseArgs(args: string, where: string): Record<string, unknown> {
  let parsed: unknown;
  assert.doesNotThrow(() => parsed = JSON.parse(args), `${where}: arguments not JSON: ${args}`);
  assert.ok(parsed && typeof parsed === "object" && !Array.isArray(parsed), `${where}: ${args}`);
  return parsed as Record<string, unknown>;
}

export const WEATHER_SCHEMA = {
  type: "object",
  properties: { city: { type: "string", description: "Город" } },
  required: ["city"],
};
export const TOOL_NAME = "get_weather";
export const TOOL_PROMPT = "Какая погода в Москве? [[sim:tool]]";

/** Awaits `p` and returns what it threw (fails if it resolved). */
export async function rejection(p: Promise<unknown> | (() => Promise<unknown>), where: string): Promise<any> {
  let value: unknown;
  try {
    value = await (typeof p === "function" ? p() : p);
  } catch (e) {
    return e;
  }
  assert.fail(`${where}: expected an error, got success: ${JSON.stringify(value)?.slice(0, 400)}`);
}
