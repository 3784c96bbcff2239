/** What the agent remembers about the signed-in person (`/api/v1/me/memories`), types generated from the API. */

import type { components } from "../api/schema";

export type Memory = components["schemas"]["Memory"];
