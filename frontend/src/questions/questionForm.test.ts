import { describe, expect, it } from "vitest";

import { answerOf, answerText, formFields } from "./questionForm";

describe("an ask_user question's form", () => {
  it("is one free-text field without a schema", () => {
    const fields = formFields(null);
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([["value", "text", true]]);
    expect(answerOf(null, fields, { value: "  blue  " })).toEqual({ answer: "blue" });
    expect(answerOf(null, fields, { value: " " })).toEqual({ error: "Your answer is required." });
  });

  it("has a field per property of an object schema and builds the object", () => {
    const schema = {
      type: "object",
      required: ["amount"],
      properties: {
        amount: { type: "integer", title: "Amount" },
        currency: { type: "string", enum: ["EUR", "USD"] },
        urgent: { type: "boolean" },
        note: { type: "string" },
      },
    };
    const fields = formFields(schema);
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ["amount", "integer", true],
      ["currency", "enum", false],
      ["urgent", "boolean", false],
      ["note", "text", false],
    ]);
    expect(answerOf(schema, fields, { amount: "250", currency: "EUR", urgent: true, note: "" })).toEqual({
      answer: { amount: 250, currency: "EUR", urgent: true },
    });
    expect(answerOf(schema, fields, { amount: "2.5" })).toEqual({ error: "Amount must be a whole number." });
    expect(answerOf(schema, fields, {})).toEqual({ error: "Amount is required." });
  });

  it("answers a primitive schema with one value and anything else as JSON", () => {
    expect(answerOf({ type: "number" }, formFields({ type: "number" }), { value: "3.5" })).toEqual({ answer: 3.5 });
    const list = { type: "array", items: { type: "string" } };
    expect(answerOf(list, formFields(list), { value: '["a", "b"]' })).toEqual({ answer: ["a", "b"] });
    expect(answerOf(list, formFields(list), { value: "[a" })).toEqual({ error: "Your answer must be JSON." });
  });

  it("shows an answer as text", () => {
    expect(answerText("production")).toBe("production");
    expect(answerText({ amount: 1 })).toBe('{"amount":1}');
    expect(answerText(null)).toBe("");
  });
});
