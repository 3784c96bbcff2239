/**
 * Two versions of an agent side by side (`GET /agents/{id}/versions/{a}/diff/{b}` gives the fields that differ,
 * each with its value in both): long text as changed lines, lists as what was added and removed, anything else
 * as its old and new value.
 */

export type DiffLine = { op: "same" | "add" | "del"; text: string };

export type FieldDiff =
  | { field: string; label: string; kind: "lines"; lines: DiffLine[] }
  | { field: string; label: string; kind: "set"; added: string[]; removed: string[] }
  | { field: string; label: string; kind: "value"; a: string; b: string };

const LABELS: Record<string, string> = {
  name: "Name",
  description: "Description",
  instructions: "Instructions",
  model: "Model",
  tools: "Tools",
  knowledge: "Knowledge",
  memory: "Memory",
  delegates: "Delegates",
  starter_prompts: "Starter prompts",
  approval: "Approval overrides",
  classification: "Classification floor",
  review_mode: "Review mode",
  output_schema: "Output schema",
};

export function fieldLabel(field: string): string {
  return LABELS[field] ?? field;
}

/** A value as one line of text: null says what it means for the field. */
export function showValue(field: string, value: unknown): string {
  if (value === null || value === undefined) {
    if (field === "model") return "the org's default";
    if (field === "tools") return "the default tools";
    if (field === "output_schema") return "none";
    return "—";
  }
  if (typeof value === "boolean") return value ? "on" : "off";
  if (typeof value === "string") return value === "" ? "(empty)" : value;
  return JSON.stringify(value);
}

/** The lines of `b` against those of `a`: a longest-common-subsequence diff (unchanged, removed, added). */
export function diffLines(a: string, b: string): DiffLine[] {
  const x = a.split("\n");
  const y = b.split("\n");
  const n = x.length;
  const m = y.length;
  // lcs[i][j]: the common lines of x[i:] and y[j:].
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      out.push({ op: "same", text: x[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: "del", text: x[i++]! });
    else out.push({ op: "add", text: y[j++]! });
  }
  while (i < n) out.push({ op: "del", text: x[i++]! });
  while (j < m) out.push({ op: "add", text: y[j++]! });
  return out;
}

function setItems(field: string, value: unknown): string[] | null {
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value as string[];
  if (field === "approval" && value && typeof value === "object" && !Array.isArray(value))
    return Object.entries(value as Record<string, unknown>).map(([tool, policy]) => `${tool}: ${String(policy)}`);
  return null;
}

/** One changed field, in the form that reads best for it. */
export function fieldDiff(change: { field: string; a?: unknown; b?: unknown }): FieldDiff {
  const { field, a, b } = change;
  const label = fieldLabel(field);
  if (typeof a === "string" && typeof b === "string" && (a.includes("\n") || b.includes("\n") || field === "instructions"))
    return { field, label, kind: "lines", lines: diffLines(a, b) };
  if (field === "output_schema" && a && b)
    return { field, label, kind: "lines", lines: diffLines(JSON.stringify(a, null, 2), JSON.stringify(b, null, 2)) };
  const before = setItems(field, a);
  const after = setItems(field, b);
  if (before && after && field !== "starter_prompts")
    return { field, label, kind: "set", added: after.filter((v) => !before.includes(v)), removed: before.filter((v) => !after.includes(v)) };
  if (field === "starter_prompts" && before && after)
    return { field, label, kind: "lines", lines: diffLines(before.join("\n"), after.join("\n")) };
  return { field, label, kind: "value", a: showValue(field, a), b: showValue(field, b) };
}

/** Every change of a diff, in the order the form shows its fields. */
export function renderDiff(changes: { field: string; a?: unknown; b?: unknown }[]): FieldDiff[] {
  const order = Object.keys(LABELS);
  const rank = (f: string) => (order.includes(f) ? order.indexOf(f) : order.length);
  return [...changes].sort((p, q) => rank(p.field) - rank(q.field)).map(fieldDiff);
}
