import { describe, expect, it } from "vitest";

import { codeRun } from "./codeRun";

describe("run_python's card", () => {
  it("reads a live result (JSON text) and a stored one (an object) the same way", () => {
    const result = {
      stdout: "rows 5\n",
      stderr: "",
      value: "518.0",
      error: null,
      files: [
        { id: "a1", filename: "revenue.png", content_type: "image/png", size: 2048, kind: "image" },
        { id: "a2", filename: "clean.csv", content_type: "text/csv", size: 40, kind: "document" },
        { filename: "no id" },
      ],
      files_left_out: ["huge.bin"],
      seconds: 0.42,
      session_ended: null,
    };
    const args = { code: "df.sum()", files: ["sales.csv"] };
    const live = codeRun(JSON.stringify(args), JSON.stringify(result));
    expect(live).toEqual(codeRun(args, result));
    expect(live.code).toBe("df.sum()");
    expect(live.inputs).toEqual(["sales.csv"]);
    expect(live.value).toBe("518.0");
    expect(live.files.map((f) => [f.filename, f.image])).toEqual([
      ["revenue.png", true],
      ["clean.csv", false],
    ]);
    expect(live.leftOut).toEqual(["huge.bin"]);
  });

  it("reads anything else as empty, never throws", () => {
    for (const junk of [null, "not json", 42, [1, 2], { files: "x" }]) {
      const run = codeRun(junk, junk);
      expect(run.files).toEqual([]);
      expect(run.code).toBe("");
      expect(run.error).toBeNull();
    }
    expect(codeRun({}, { error: "the call ran past its 30 s wall-clock limit", session_ended: "limit" }).ended).toBe("limit");
  });
});
