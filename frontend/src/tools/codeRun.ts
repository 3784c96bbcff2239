/** `run_python`'s call and result as the tool card shows them: the code, what it printed, the value of its last
 * expression, why it failed, and the files it wrote (images shown inline, others saved as downloads). Live results
 * arrive as JSON text, stored ones as objects; anything that is not the tool's shape reads as empty. */

export interface CodeRunFile {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  image: boolean;
}

export interface CodeRun {
  code: string;
  inputs: string[];
  stdout: string;
  stderr: string;
  value: string | null;
  error: string | null;
  files: CodeRunFile[];
  leftOut: string[];
  seconds: number | null;
  ended: string | null;
}

function record(value: unknown): Record<string, unknown> {
  if (typeof value === "string") {
    try {
      return record(JSON.parse(value));
    } catch {
      return {};
    }
  }
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");
const textOrNull = (value: unknown): string | null => (typeof value === "string" && value ? value : null);
const texts = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []);

function file(value: unknown): CodeRunFile | null {
  const f = record(value);
  if (typeof f.id !== "string" || typeof f.filename !== "string") return null;
  const contentType = text(f.content_type) || "application/octet-stream";
  return { id: f.id, filename: f.filename, contentType, size: typeof f.size === "number" ? f.size : 0, image: f.kind === "image" };
}

export function codeRun(args: unknown, result: unknown): CodeRun {
  const a = record(args);
  const r = record(result);
  return {
    code: text(a.code),
    inputs: texts(a.files),
    stdout: text(r.stdout),
    stderr: text(r.stderr),
    value: textOrNull(r.value),
    error: textOrNull(r.error),
    files: (Array.isArray(r.files) ? r.files : []).map(file).filter((f): f is CodeRunFile => f !== null),
    leftOut: texts(r.files_left_out),
    seconds: typeof r.seconds === "number" ? r.seconds : null,
    ended: textOrNull(r.session_ended),
  };
}
