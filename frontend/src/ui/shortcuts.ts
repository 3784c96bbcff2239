/**
 * Keyboard shortcuts of the web chat (listed in `ShortcutsHelp.vue`): new chat, focus the message box, edit the last
 * message (ArrowUp in an empty box), stop the running answer (Esc), this list (?). They act through the page's own
 * controls (the composer, the Edit and Stop buttons), so a shortcut does exactly what the click does.
 */

import { nextTick, ref } from "vue";
import type { Router } from "vue-router";

export const helpOpen = ref(false);

export const SHORTCUTS: { keys: string[]; what: string }[] = [
  { keys: ["Ctrl", "Shift", "O"], what: "Start a new chat" },
  { keys: ["Shift", "Esc"], what: "Focus the message box" },
  { keys: ["/"], what: "Focus the message box (when not typing)" },
  { keys: ["↑"], what: "Edit your last message (in an empty message box)" },
  { keys: ["Esc"], what: "Stop the answer being written" },
  { keys: ["?"], what: "Show these shortcuts" },
];

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
}

function modalOpen(): boolean {
  return !!document.querySelector("dialog[open]");
}

export function focusComposer(): boolean {
  const box = document.querySelector<HTMLTextAreaElement>("#message");
  if (!box || box.disabled) return false;
  box.focus();
  return true;
}

function last<T extends Element>(selector: string): T | null {
  const all = document.querySelectorAll<T>(selector);
  return all.length ? all[all.length - 1]! : null;
}

export function onShortcut(event: KeyboardEvent, router: Router): void {
  if (event.defaultPrevented || event.isComposing) return;
  const mod = event.ctrlKey || event.metaKey;
  if (mod && event.shiftKey && event.key.toLowerCase() === "o") {
    event.preventDefault();
    void router.push("/").then(() => nextTick(focusComposer));
    return;
  }
  if (modalOpen()) return;
  if (event.key === "Escape" && event.shiftKey) {
    if (focusComposer()) event.preventDefault();
    return;
  }
  if (event.key === "Escape") {
    const target = event.target as HTMLElement | null;
    if (target?.closest("[data-testid='turn-tools'], [aria-expanded='true']")) return;
    const stop = document.querySelector<HTMLButtonElement>("[data-testid='stop-run']");
    if (stop) {
      event.preventDefault();
      stop.click();
    }
    return;
  }
  if (event.key === "ArrowUp" && !mod && !event.shiftKey && !event.altKey) {
    const box = event.target as HTMLTextAreaElement | null;
    if (box?.id !== "message" || box.value !== "") return;
    const edit = last<HTMLButtonElement>("[data-testid='transcript'] [data-testid='edit-message']:not(:disabled)");
    if (edit) {
      event.preventDefault();
      edit.click();
    }
    return;
  }
  if (typing(event.target) || mod || event.altKey) return;
  if (event.key === "?") {
    event.preventDefault();
    helpOpen.value = true;
  } else if (event.key === "/") {
    if (focusComposer()) event.preventDefault();
  }
}
