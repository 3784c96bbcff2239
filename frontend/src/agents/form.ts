/**
 * The agent editor's form: its fields as the inputs hold them (starter prompts one a line, the output schema as JSON
 * text, the model "" for the org's default), checked before saving, and turned into the API's bodies — a create, or
 * a PATCH of only what changed (each PATCH is a new version).
 */

import type { Agent, AgentCreate, AgentPatch } from "./agents";

export const MAX_STARTERS = 6;
export const SLUG_PATTERN = /^[a-z0-9-]{2,64}$/;

export type Classification = "standard" | "confidential" | "restricted";
/** `org`, `personal`, or a named collection (its id or name). */
export type Knowledge = string;
export type ApprovalOverride = "gate" | "always";
/** Who reviews its acting calls besides the gates (a chat may make it stricter, never laxer). */
export type ReviewMode = "autonomous" | "approve_each" | "judge";
export type Visibility = "private" | "org";

export interface AgentForm {
  name: string;
  slug: string;
  description: string;
  instructions: string;
  /** "" the org's default, "auto", or a model id. */
  model: string;
  /** null: the run's default tools. */
  tools: string[] | null;
  knowledge: Knowledge[];
  memory: boolean;
  delegates: string[];
  /** One prompt a line. */
  starters: string;
  approval: Record<string, ApprovalOverride>;
  classification: Classification;
  reviewMode: ReviewMode;
  /** JSON text; "" for none. */
  outputSchema: string;
  visibility: Visibility;
}

type Config = Pick<
  Agent,
  "name" | "description" | "instructions" | "model" | "tools" | "knowledge" | "memory" | "delegates" | "starter_prompts" | "approval" | "classification" | "review_mode" | "output_schema"
>;

export function emptyForm(): AgentForm {
  return {
    name: "",
    slug: "",
    description: "",
    instructions: "",
    model: "",
    tools: null,
    knowledge: [],
    memory: true,
    delegates: [],
    starters: "",
    approval: {},
    classification: "standard",
    reviewMode: "autonomous",
    outputSchema: "",
    visibility: "private",
  };
}

/** The form for a version's config (and the agent's slug and visibility). */
export function formOf(config: Config, slug: string, visibility: Visibility): AgentForm {
  return {
    name: config.name,
    slug,
    description: config.description ?? "",
    instructions: config.instructions,
    model: config.model ?? "",
    tools: config.tools ?? null,
    knowledge: [...(config.knowledge ?? [])],
    memory: config.memory ?? true,
    delegates: [...(config.delegates ?? [])],
    starters: (config.starter_prompts ?? []).join("\n"),
    approval: { ...(config.approval ?? {}) },
    classification: config.classification ?? "standard",
    reviewMode: config.review_mode ?? "autonomous",
    outputSchema: config.output_schema ? JSON.stringify(config.output_schema, null, 2) : "",
    visibility,
  };
}

/** "Contract reviewer" → "contract-reviewer". */
export function slugify(name: string): string {
  return name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
}

export function starterList(text: string): string[] {
  return text
    .split("\n")
    .map((s) => s.trim())
    .filter(Boolean);
}

function parseSchema(text: string): { value: Record<string, unknown> | null; error: string | null } {
  if (!text.trim()) return { value: null, error: null };
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== "object" || Array.isArray(value)) return { value: null, error: "The output schema is a JSON object." };
    return { value: value as Record<string, unknown>, error: null };
  } catch {
    return { value: null, error: "The output schema is not valid JSON." };
  }
}

/** What is wrong with the form, by field (empty: it can be saved; the server checks the rest). */
export function problems(form: AgentForm): Partial<Record<keyof AgentForm, string>> {
  const out: Partial<Record<keyof AgentForm, string>> = {};
  if (!form.name.trim()) out.name = "Give the agent a name.";
  if (!SLUG_PATTERN.test(form.slug)) out.slug = "2 to 64 lower-case letters, digits or dashes.";
  if (!form.instructions.trim()) out.instructions = "Tell the agent what to do.";
  const starters = starterList(form.starters);
  if (starters.length > MAX_STARTERS) out.starters = `At most ${MAX_STARTERS} starter prompts.`;
  else if (starters.some((s) => s.length > 500)) out.starters = "A starter prompt has at most 500 characters.";
  const schema = parseSchema(form.outputSchema);
  if (schema.error) out.outputSchema = schema.error;
  return out;
}

/** The versioned fields of the form, as the API takes them. */
export function configOf(form: AgentForm): Config {
  return {
    name: form.name.trim(),
    description: form.description,
    instructions: form.instructions,
    model: form.model || null,
    tools: form.tools ? [...form.tools] : null,
    knowledge: [...form.knowledge],
    memory: form.memory,
    delegates: [...form.delegates],
    starter_prompts: starterList(form.starters),
    approval: { ...form.approval },
    classification: form.classification,
    review_mode: form.reviewMode,
    output_schema: parseSchema(form.outputSchema).value,
  };
}

export function createBody(form: AgentForm): AgentCreate {
  return { ...configOf(form), slug: form.slug, visibility: form.visibility };
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A PATCH of what the form changes of `saved` (`null` when nothing changed); `publish: false` saves a draft. */
export function patchBody(form: AgentForm, saved: AgentForm, publish: boolean): AgentPatch | null {
  const now = configOf(form);
  const before = configOf(saved);
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(now) as (keyof Config)[]) if (!same(now[key], before[key])) body[key] = now[key];
  if (form.slug !== saved.slug) body.slug = form.slug;
  if (form.visibility !== saved.visibility) body.visibility = form.visibility;
  if (Object.keys(body).length === 0) return null;
  return { ...(body as AgentPatch), publish };
}
