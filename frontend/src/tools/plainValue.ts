/** How a tool's arguments or result read for a person: text, a few named fields, or (nested data) raw JSON. */

export type PlainValue =
  | { kind: "empty" }
  | { kind: "text"; text: string }
  | { kind: "fields"; fields: { name: string; value: string }[] }
  | { kind: "json" };

function scalar(value: unknown): string | null {
  if (value === null || value === undefined) return "—";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === "string" || typeof v === "number")) return value.join(", ");
  return null;
}

/** `snake_case` and `camelCase` keys as words: `max_results` → "Max results". */
export function fieldName(key: string): string {
  const words = key
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function plainValue(value: unknown): PlainValue {
  let v: unknown = value;
  if (typeof value === "string") {
    const text = value.trim();
    if (!text) return { kind: "empty" };
    if (!/^[[{"]/.test(text)) return { kind: "text", text: value };
    try {
      v = JSON.parse(text);
    } catch {
      return { kind: "text", text: value };
    }
  }
  if (v === null || v === undefined) return { kind: "empty" };
  const single = scalar(v);
  if (single !== null) return { kind: "text", text: single };
  if (typeof v === "object" && !Array.isArray(v)) {
    const entries = Object.entries(v as Record<string, unknown>);
    if (!entries.length) return { kind: "empty" };
    const fields = entries.map(([name, item]) => ({ name: fieldName(name), value: scalar(item) }));
    if (entries.length <= 12 && fields.every((f) => f.value !== null)) {
      return { kind: "fields", fields: fields.map((f) => ({ name: f.name, value: f.value! })) };
    }
  }
  return { kind: "json" };
}
