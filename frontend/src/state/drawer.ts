/** The chat list on a narrow screen is a drawer: one flag, opened by the pane's "Chats" button, closed on navigation. */

import { reactive } from "vue";

export const drawer = reactive({ open: false });

export function openDrawer(): void {
  drawer.open = true;
}

export function closeDrawer(): void {
  drawer.open = false;
}
