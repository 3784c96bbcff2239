import { describe, expect, it } from "vitest";

import { createBody, emptyForm, formOf, patchBody, problems, slugify, starterList } from "./form";

function filled() {
  return { ...emptyForm(), name: "Contract reviewer", slug: "contract-reviewer", instructions: "Review contracts." };
}

describe("agent form", () => {
  it("makes a slug from a name", () => {
    expect(slugify("Contract Reviewer (EU)!")).toBe("contract-reviewer-eu");
  });

  it("reads starter prompts one a line, blank lines dropped", () => {
    expect(starterList(" a \n\n b\n")).toEqual(["a", "b"]);
  });

  it("finds what is wrong before saving", () => {
    const form = { ...emptyForm(), slug: "X", starters: "1\n2\n3\n4\n5\n6\n7", outputSchema: "{nope" };
    const found = problems(form);
    expect(Object.keys(found).sort()).toEqual(["instructions", "name", "outputSchema", "slug", "starters"]);
    expect(problems(filled())).toEqual({});
    expect(problems({ ...filled(), outputSchema: "[1]" }).outputSchema).toMatch(/object/);
  });

  it("creates with the API's fields: null model and tools for the defaults, the schema parsed", () => {
    const body = createBody({ ...filled(), starters: "Hi\nReview this", outputSchema: '{"type": "object"}' });
    expect(body).toMatchObject({
      slug: "contract-reviewer",
      visibility: "private",
      model: null,
      tools: null,
      starter_prompts: ["Hi", "Review this"],
      output_schema: { type: "object" },
    });
  });

  it("patches only what changed, with publish as asked", () => {
    const agent = {
      ...createBody(filled()),
      knowledge: [],
      memory: true,
      delegates: [],
      approval: {},
      classification: "standard" as const,
    };
    const saved = formOf(agent, "contract-reviewer", "private");
    expect(patchBody(saved, saved, true)).toBeNull();
    expect(patchBody({ ...saved, instructions: "Be thorough." }, saved, false)).toEqual({ instructions: "Be thorough.", publish: false });
    expect(patchBody({ ...saved, tools: ["remember"], visibility: "org" }, saved, true)).toEqual({ tools: ["remember"], visibility: "org", publish: true });
    expect(saved.reviewMode).toBe("autonomous");
    expect(patchBody({ ...saved, reviewMode: "approve_each" }, saved, true)).toEqual({ review_mode: "approve_each", publish: true });
  });
});
