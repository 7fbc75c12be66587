/** The key's settings for family theta (spec §3.2 paused from the dashboard, §7.6 its own request limits). */
import { type FamilyKeySettings, type FamilySettings, familySettings } from "../../store/family_settings.ts";

/** The name theta's settings are kept under in a key's record (KeyRecord.families). */
export const THETA_FAMILY = "theta";

/** Theta's settings of a key; the defaults (not paused, no limits) when it has none. */
export const thetaSettings = (rec: { families: FamilySettings }): FamilyKeySettings =>
  familySettings(rec, THETA_FAMILY);
