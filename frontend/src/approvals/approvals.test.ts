import { describe, expect, it } from "vitest";

import { approvals, inboxApproval, quorumLabel } from "./approvals";

describe("quorumLabel", () => {
  it("says nothing for an approval one person decides", () => {
    expect(quorumLabel(1)).toBeNull();
    expect(quorumLabel(undefined)).toBeNull();
  });

  it("counts the approvals of a quorum of two and names who gave them", () => {
    expect(quorumLabel(2, [])).toBe("0 of 2 approvals");
    expect(quorumLabel(2, ["Alice"])).toBe("1 of 2 approvals — approved by Alice");
    expect(quorumLabel(2, [null])).toBe("1 of 2 approvals — approved by someone");
  });
});

describe("inboxApproval", () => {
  it("finds the loaded approval by id", () => {
    const item = {
      id: "a1", run_id: "r1", chat_id: "c1", tool: "refund", tool_call_id: "t1", args: {}, status: "pending" as const,
      reason: null, edited_args: null, decided_by: null, decided_at: null, expires_at: "2030-01-01T00:00:00Z",
      created_at: "2030-01-01T00:00:00Z", quorum: 2, approved_by: [{ id: "u1", name: "Alice" }],
    };
    approvals.items = [item];
    expect(inboxApproval("a1")?.approved_by[0]?.name).toBe("Alice");
    expect(inboxApproval("a2")).toBeUndefined();
  });
});
