/** The models this user may pick (and their default), loaded once per session. */

import { reactive } from "vue";

import { call } from "../api/client";
import { ApiError } from "../api/http";

/** Where the default model is kept when the server has no per-user settings (GET /me/settings → 404). */
export const LOCAL_DEFAULT_KEY = "pa.defaultModel";
import type { Model } from "../api/client";

export const models = reactive({
  items: [] as Model[],
  defaultModel: "auto",
  /** "server" when /me/settings exists, else "browser". */
  settingsStore: "server" as "server" | "browser",
  loaded: false,
  error: null as string | null,
});

let loading: Promise<void> | null = null;

export function loadModels(force = false): Promise<void> {
  if (loading && !force) return loading;
  loading = (async () => {
    const [list, settings] = await Promise.allSettled([call("list_models"), call("get_my_settings")]);
    if (list.status === "fulfilled") models.items = list.value.items;
    else models.error = "The model list could not be loaded.";
    if (settings.status === "fulfilled") {
      models.settingsStore = "server";
      if (settings.value.default_model) models.defaultModel = settings.value.default_model;
    } else if (settings.reason instanceof ApiError && settings.reason.status === 404) {
      models.settingsStore = "browser";
      models.defaultModel = localStorage.getItem(LOCAL_DEFAULT_KEY) || "auto";
    }
    models.loaded = true;
  })();
  return loading;
}

export function modelLabel(model: Model): string {
  const label = model.label || model.id;
  return model.offline_demo ? `${label} (offline demo)` : label;
}
