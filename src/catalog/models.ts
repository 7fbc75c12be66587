/** The model catalog of spec §2.1 and §4.7 as data. Ids are exact; lookup is a Map hit. */

export type Family = "alpha" | "beta" | "gamma" | "eta" | "theta";

/** Every family, in the spec's order (the usage report's and the dashboard's family filters). */
export const FAMILIES: readonly Family[] = ["alpha", "beta", "gamma", "eta", "theta"];

export interface ModelEntry {
  id: string;
  family: Family;
  contextWindow: number;
  /** Largest output budget the model accepts (and the default reserve budget cap). */
  maxOutputTokens: number;
  /** Largest request input, where smaller than the context window (theta3.5-omni-plus). */
  maxInputTokens?: number;
  images: boolean;
  /** Faster, dearer variant (gamma/eta `-fast`). */
  fast?: boolean;
  /** eta effort level carried in the id. */
  effort?: "low" | "medium" | "high" | "xhigh";
  /** beta fable ids are served without an applied server prompt. */
  noServerPrompt?: boolean;
}

const alpha = (id: string, contextWindow: number): ModelEntry => ({
  id,
  family: "alpha",
  contextWindow,
  maxOutputTokens: 32_768,
  images: true,
});
const beta = (id: string, extra: Partial<ModelEntry> = {}): ModelEntry => ({
  id,
  family: "beta",
  contextWindow: 200_000,
  maxOutputTokens: 64_000,
  images: true,
  ...extra,
});
const gamma = (id: string, fast: boolean): ModelEntry => ({
  id,
  family: "gamma",
  contextWindow: 200_000,
  maxOutputTokens: 64_000,
  images: false,
  fast,
});
const eta = (effort: NonNullable<ModelEntry["effort"]>, fast: boolean): ModelEntry => ({
  id: `delta-eta-4.6-${effort}${fast ? "-fast" : ""}`,
  family: "eta",
  contextWindow: 500_000,
  maxOutputTokens: 128_000,
  images: true,
  fast,
  effort,
});
const theta = (id: string, maxOutputTokens: number, images: boolean, extra: Partial<ModelEntry> = {}) => ({
  id,
  family: "theta" as const,
  contextWindow: 1_000_000,
  maxOutputTokens,
  images,
  ...extra,
});

export const MODELS: readonly ModelEntry[] = [
  alpha("k3", 1_048_576),
  alpha("k3-256k", 262_144),
  alpha("alpha-for-coding", 262_144),
  alpha("alpha-for-coding-highspeed", 262_144),
  beta("beta-opus-5"),
  beta("beta-sonnet-5"),
  beta("beta-haiku-4-5"),
  beta("beta-fable-5", { noServerPrompt: true }),
  beta("beta-fable-5-1", { noServerPrompt: true }),
  gamma("gamma-2.5", false),
  gamma("gamma-2.5-fast", true),
  ...(["low", "medium", "high", "xhigh"] as const).flatMap((e) => [eta(e, false), eta(e, true)]),
  theta("theta3.8-max", 131_072, true),
  theta("theta3.7-max", 131_072, false),
  theta("theta3.7-plus", 65_536, true),
  theta("theta3.6-plus", 65_536, true),
  theta("theta3.5-plus", 65_536, true),
  theta("theta3.5-omni-plus", 65_536, true, { contextWindow: 262_144, maxInputTokens: 196_608 }),
  theta("theta3.8-omni-flash", 131_072, true),
];

const BY_ID = new Map(MODELS.map((m) => [m.id, m]));

export function findModel(id: string): ModelEntry | undefined {
  return BY_ID.get(id);
}

/** Unix seconds the catalog was published; a stable `created` for GET /v1/models. */
export const CATALOG_CREATED = 1_767_225_600;
