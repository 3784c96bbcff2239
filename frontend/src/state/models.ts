/** The models this user may pick (and their default), loaded once per session. */

import { reactive } from "vue";

import { api } from "../api/client";
import type { Model } from "../api/client";

export const models = reactive({
  items: [] as Model[],
  defaultModel: "auto",
  loaded: false,
  error: null as string | null,
});

let loading: Promise<void> | null = null;

export function loadModels(force = false): Promise<void> {
  if (loading && !force) return loading;
  loading = (async () => {
    const [list, settings] = await Promise.allSettled([api.listModels(), api.getSettings()]);
    if (list.status === "fulfilled") models.items = list.value.items;
    else models.error = "The model list could not be loaded.";
    if (settings.status === "fulfilled" && settings.value.default_model) models.defaultModel = settings.value.default_model;
    models.loaded = true;
  })();
  return loading;
}

export function modelLabel(model: Model): string {
  const label = model.label || model.id;
  return model.offline_demo ? `${label} (offline demo)` : label;
}
