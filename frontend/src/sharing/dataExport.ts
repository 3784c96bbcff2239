/**
 * A data export as the server builds it (issue 38): the POST answers 202 with the export's id at once, the ZIP is
 * written in the background, and its status is polled until a short-lived presigned download link is there, which
 * the browser then follows (the file comes from the bucket, never through the API, whatever its size).
 */

export interface ExportStatus {
  status: "pending" | "running" | "ready" | "failed";
  download_url?: string | null;
  error?: string | null;
}

export interface PollOptions {
  intervalMs?: number;
  timeoutMs?: number;
  onStatus?: (status: ExportStatus["status"]) => void;
  sleep?: (ms: number) => Promise<void>;
}

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll `read` until the export is ready; its download URL (an error when it failed or took too long). */
export async function pollExport(read: () => Promise<ExportStatus>, options: PollOptions = {}): Promise<string> {
  const { intervalMs = 1000, timeoutMs = 15 * 60_000, onStatus, sleep = wait } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await read();
    onStatus?.(current.status);
    if (current.status === "ready" && current.download_url) return current.download_url;
    if (current.status === "failed") throw new Error(`The export failed${current.error ? ` (${current.error})` : ""}.`);
    if (Date.now() > deadline) throw new Error("The export is taking too long; try again later.");
    await sleep(intervalMs);
  }
}

/** Save the file behind a presigned URL (its response names it as an attachment). */
export function saveFrom(url: string): void {
  const link = document.createElement("a");
  link.href = url;
  link.rel = "noopener";
  document.body.appendChild(link);
  link.click();
  link.remove();
}

export function describeStatus(status: ExportStatus["status"] | null): string {
  if (status === "pending" || status === "running") return "Preparing the export…";
  if (status === "ready") return "The export is ready; the download has started.";
  return "";
}
