/** The tools this user may give a run (`GET /api/v1/tools`), loaded once per session. */

import { reactive } from "vue";

import { call, type Tool } from "../api/client";
import { describeError } from "../api/http";
import { session } from "../auth/session";

export const catalog = reactive({ items: [] as Tool[], loaded: false, error: null as string | null });

let loading: Promise<void> | null = null;
let loadedFor = "";

/** Load the catalog (again with `force`, e.g. after an admin changed a server, or for another signed-in user). */
export function loadCatalog(force = false): Promise<void> {
  const who = `${session.me?.org.slug ?? ""}/${session.me?.user_id ?? ""}`;
  if (loading && !force && loadedFor === who) return loading;
  loadedFor = who;
  loading = call("list_tools").then(
    (list) => {
      catalog.items = list.items;
      catalog.error = null;
      catalog.loaded = true;
    },
    (err: unknown) => {
      catalog.error = describeError(err);
      catalog.loaded = true;
      loading = null; // try again next time
    },
  );
  return loading;
}
