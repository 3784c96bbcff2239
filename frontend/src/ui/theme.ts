/** The in-app theme: follow the system, or light or dark whatever it says; kept in this browser. */

import { ref } from "vue";

export type Theme = "system" | "light" | "dark";
const KEY = "pa.theme";

function stored(): Theme {
  try {
    const value = window.localStorage.getItem(KEY);
    return value === "light" || value === "dark" ? value : "system";
  } catch {
    return "system";
  }
}

export const theme = ref<Theme>(stored());

/** `<html data-theme>` switches the colour tokens (styles/base.css); none: the system's preference. */
export function applyTheme(value: Theme): void {
  theme.value = value;
  if (value === "system") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = value;
  try {
    if (value === "system") window.localStorage.removeItem(KEY);
    else window.localStorage.setItem(KEY, value);
  } catch {
    // private mode: the choice lasts for this page
  }
}

applyTheme(theme.value);
