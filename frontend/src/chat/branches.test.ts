import { describe, expect, it } from "vitest";

import type { Message } from "../api/client";
import type { AguiEvent } from "../stream/agui";
import { applyEvent, newRunView } from "../stream/runView";
import { branchPoints, cutAt, position, sibling, summaryMarkerAfter } from "./branches";

const at = (id: number, role: Message["role"], parent: number | null, siblings: number[], text = ""): Message => ({
  id: `${id}:0`,
  role,
  text,
  run_id: "r",
  created_at: "",
  message_id: id,
  parent_id: parent,
  sibling_ids: siblings,
});

// "one" was edited (10 is its second version); the answer to 10 was regenerated (13 beside 11).
const branch: Message[] = [
  at(10, "user", null, [1, 10], "uno"),
  at(13, "assistant", 10, [11, 13], ""),
  { ...at(13, "assistant", 10, [11, 13], "checking"), id: "13:1", role: "tool" },
  at(14, "assistant", 13, [14], "the answer"),
  at(15, "user", 14, [15], "next"),
];

describe("branch controls", () => {
  it("puts a version switch on user messages and on the last answer of each turn", () => {
    const points = branchPoints(branch);
    expect(points.get("10:0")).toMatchObject({ messageId: 10, siblings: [1, 10], parentId: null });
    expect(points.get("14:0")).toMatchObject({ messageId: 13, siblings: [11, 13], userMessageId: 10, userItemId: "10:0" });
    expect(points.has("13:0")).toBe(false); // the tool-calling response is not the turn's last answer
    expect(points.get("15:0")).toMatchObject({ messageId: 15, siblings: [15], parentId: 14 });
  });

  it("steps between versions and stops at either end", () => {
    const point = branchPoints(branch).get("10:0")!;
    expect(position(point)).toEqual({ index: 2, count: 2 });
    expect(sibling(point, -1)).toBe(1);
    expect(sibling(point, 1)).toBeNull();
  });

  it("cuts the view where an edit or a regenerate starts", () => {
    expect(cutAt(branch, "15:0", false).map((m) => m.id)).toEqual(["10:0", "13:0", "13:1", "14:0"]);
    expect(cutAt(branch, "10:0", true).map((m) => m.id)).toEqual(["10:0"]);
  });

  it("marks where the model's summary ends, and nothing when all is summarised or nothing is", () => {
    expect(summaryMarkerAfter(branch, 14)).toBe("14:0");
    expect(summaryMarkerAfter(branch, null)).toBeNull();
    expect(summaryMarkerAfter(branch, 99)).toBeNull();
  });
});

describe("long chats", () => {
  it("tells the user, live, when the run's older turns were summarised for the model", () => {
    const v = newRunView({ runId: "r", chatId: "c", eventsUrl: "/e" });
    const event = { type: "CUSTOM", name: "history_summarised", value: { covers_message_id: 4, summary_message_id: 9, turns: 2 } };
    applyEvent(v, event as unknown as AguiEvent, "1-0");
    expect(v.items).toEqual([expect.objectContaining({ kind: "notice", text: expect.stringContaining("older turns were summarised") })]);
  });
});
