/** What the agent remembers about the signed-in person (the memories routes), types generated from the API. */

import type { components } from "../api/schema";

export type Memory = components["schemas"]["Memory"];
