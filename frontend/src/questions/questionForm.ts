/**
 * The fields of an `ask_user` question's form and the answer they make: one of `choices`, the fields of a small JSON
 * Schema object (text, number, yes/no, a list to pick from), a single value of a primitive schema, or free text.
 * A schema the form cannot show field by field is answered as JSON. The server checks the answer again (422).
 */

export type FieldKind = "text" | "number" | "integer" | "boolean" | "enum" | "json";

export interface FormField {
  name: string;
  label: string;
  kind: FieldKind;
  required: boolean;
  options: string[];
  description: string | null;
}

type Schema = Record<string, unknown>;

function fieldOf(name: string, schema: Schema, required: boolean): FormField {
  const title = typeof schema.title === "string" ? schema.title : name;
  const description = typeof schema.description === "string" ? schema.description : null;
  const options = Array.isArray(schema.enum) ? schema.enum.map(String) : [];
  const type = schema.type;
  const kind: FieldKind = options.length
    ? "enum"
    : type === "string"
      ? "text"
      : type === "number"
        ? "number"
        : type === "integer"
          ? "integer"
          : type === "boolean"
            ? "boolean"
            : "json";
  return { name, label: title, kind, required, options, description };
}

/** The form's fields: one per property of an object schema, one (named "value") otherwise. */
export function formFields(schema: Schema | null): FormField[] {
  if (!schema) return [{ name: "value", label: "Your answer", kind: "text", required: true, options: [], description: null }];
  if (schema.type === "object" && schema.properties && typeof schema.properties === "object") {
    const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
    return Object.entries(schema.properties as Record<string, Schema>).map(([name, prop]) => fieldOf(name, prop ?? {}, required.has(name)));
  }
  return [{ ...fieldOf("value", schema, true), label: "Your answer" }];
}

/** The answer the fields' values make (`values` as the inputs hold them), or an error to show. */
export function answerOf(schema: Schema | null, fields: FormField[], values: Record<string, string | boolean>): { answer: unknown } | { error: string } {
  const parsed: Record<string, unknown> = {};
  for (const field of fields) {
    const raw = values[field.name];
    if (field.kind === "boolean") {
      parsed[field.name] = raw === true;
      continue;
    }
    const text = typeof raw === "string" ? raw.trim() : "";
    if (!text) {
      if (field.required) return { error: `${field.label} is required.` };
      continue;
    }
    if (field.kind === "number" || field.kind === "integer") {
      const n = Number(text);
      if (!Number.isFinite(n) || (field.kind === "integer" && !Number.isInteger(n))) return { error: `${field.label} must be a${field.kind === "integer" ? " whole" : ""} number.` };
      parsed[field.name] = n;
    } else if (field.kind === "json") {
      try {
        parsed[field.name] = JSON.parse(text);
      } catch {
        return { error: `${field.label} must be JSON.` };
      }
    } else parsed[field.name] = text;
  }
  const isObject = !!schema && schema.type === "object" && !!schema.properties;
  return { answer: isObject ? parsed : parsed.value };
}

/** An answer as a person reads it. */
export function answerText(answer: unknown): string {
  if (typeof answer === "string") return answer;
  if (answer === null || answer === undefined) return "";
  return JSON.stringify(answer);
}
