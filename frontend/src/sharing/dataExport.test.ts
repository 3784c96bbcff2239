import { describe, expect, it } from "vitest";

import { pollExport, type ExportStatus } from "./dataExport";

function answers(...statuses: ExportStatus[]): () => Promise<ExportStatus> {
  let i = 0;
  return async () => statuses[Math.min(i++, statuses.length - 1)] ?? { status: "failed" };
}

const noWait = async (): Promise<void> => {};

describe("pollExport", () => {
  it("polls until the export is ready and gives its download URL, reporting each status", async () => {
    const seen: string[] = [];
    const url = await pollExport(
      answers({ status: "pending" }, { status: "running" }, { status: "ready", download_url: "https://s3/x.zip?sig" }),
      { sleep: noWait, onStatus: (s) => seen.push(s) },
    );
    expect(url).toBe("https://s3/x.zip?sig");
    expect(seen).toEqual(["pending", "running", "ready"]);
  });

  it("fails with the server's reason when the export failed", async () => {
    await expect(pollExport(answers({ status: "failed", error: "ClientError" }), { sleep: noWait })).rejects.toThrow(
      "The export failed (ClientError).",
    );
  });

  it("gives up after its time", async () => {
    await expect(pollExport(answers({ status: "running" }), { sleep: noWait, timeoutMs: -1 })).rejects.toThrow(
      "taking too long",
    );
  });
});
