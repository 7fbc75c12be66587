/**
 * A key's settings for one model family, kept by the store as data: which families exist and what their
 * settings mean is the families' business (spec §3.2 pausing a family for a key, §7.6 the key's own request
 * limits). A family with no entry is not paused and has no limits.
 */
export interface FamilyKeySettings {
  paused: boolean;
  /** Requests of the family per UTC hour and day; null: no limit. */
  hourlyRequests: number | null;
  dailyRequests: number | null;
}

/** A key's settings by family name. */
export type FamilySettings = Readonly<Record<string, FamilyKeySettings>>;

/** What a family with no entry reads: frozen, shared, so a read allocates nothing. */
export const NO_FAMILY_SETTINGS: FamilyKeySettings = Object.freeze({
  paused: false,
  hourlyRequests: null,
  dailyRequests: null,
});

/** The key's settings for `family`, the defaults when it has none. */
export function familySettings(rec: { families: FamilySettings }, family: string): FamilyKeySettings {
  return rec.families[family] ?? NO_FAMILY_SETTINGS;
}

/** True when the settings are the defaults (no entry needs to be kept). */
export function isDefaultSettings(s: FamilyKeySettings): boolean {
  return !s.paused && s.hourlyRequests === null && s.dailyRequests === null;
}

const isLimit = (v: unknown): v is number | null =>
  v === null || (typeof v === "number" && Number.isSafeInteger(v) && v >= 0);

/**
 * Settings as read from storage, checked: an entry of the wrong shape is dropped (its family reads as having
 * no settings) rather than failing the key's lookup; `onBad` hears which family was dropped ("*": the whole value).
 */
export function parseFamilySettings(
  value: unknown,
  onBad: (family: string) => void = () => {},
): FamilySettings {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    if (value !== null && value !== undefined) onBad("*");
    return {};
  }
  const out: Record<string, FamilyKeySettings> = {};
  for (const [family, s] of Object.entries(value as Record<string, unknown>)) {
    const e = s as Partial<Record<keyof FamilyKeySettings, unknown>> | null;
    if (
      e !== null && typeof e === "object" && typeof e.paused === "boolean" && isLimit(e.hourlyRequests) &&
      isLimit(e.dailyRequests)
    ) {
      out[family] = { paused: e.paused, hourlyRequests: e.hourlyRequests, dailyRequests: e.dailyRequests };
    } else onBad(family);
  }
  return out;
}
