import { describe, expect, it } from "vitest";

import { factsOf, formatCost, formatSeconds } from "./runFacts";

describe("an answer's run facts", () => {
  it("takes the model that answered, the run's duration and its cost", () => {
    const facts = factsOf({
      answered_model: "gpt-4o-mini",
      model: "auto",
      started_at: "2026-01-01T10:00:00Z",
      finished_at: "2026-01-01T10:00:02.500Z",
      cost_usd: 0.0042,
    });
    expect(facts).toEqual({ model: "gpt-4o-mini", seconds: 2.5, cost: 0.0042, agent: null });
  });

  it("names the agent and the version that answered", () => {
    const agent = { id: "a1", slug: "contract-reviewer", version: 2 };
    const facts = factsOf({ answered_model: null, model: "auto", started_at: null, finished_at: null, cost_usd: 0, agent });
    expect(facts.agent).toEqual({ slug: "contract-reviewer", version: 2 });
  });

  it("says a small cost in fractions of a cent and a zero cost as zero", () => {
    expect(formatCost(0)).toBe("$0.00");
    expect(formatCost(0.0042)).toBe("$0.0042");
    expect(formatCost(1.254)).toBe("$1.25");
    expect(formatSeconds(2.5)).toBe("2.5 s");
    expect(formatSeconds(45.4)).toBe("45 s");
  });
});
