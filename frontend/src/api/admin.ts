/** The admin console's types (providers and models, budgets, members, workflows and their outputs, the approval
 * audit), generated from the API like `client.ts`'s. */

import type { Ok } from "./client";
import type { components } from "./schema";

type Schemas = components["schemas"];
export type Provider = Schemas["ProviderOut"];
export type ProviderModel = Schemas["ProviderModelOut"];
export type ModelTag = ProviderModel["tags"][number];
export type BudgetSpend = Schemas["BudgetSpendOut"];
export type Member = Ok<"list_org_members">["items"][number];
export type Workflow = Schemas["WorkflowOut"];
export type WorkflowRun = Schemas["WorkflowRunOut"];
export type Output = Schemas["OutputOut"];
export type OutputDelivery = Schemas["OutputDeliveryOut"];
export type AuditEntry = Schemas["AuditEntry"];
export type ToolPolicy = Schemas["ToolPolicyOut"];
export type ToolPolicyReportItem = Schemas["ToolPolicyReportItem"];
export type ProviderKind = Provider["kind"];
export type ConnectionTest = Schemas["ConnectionTestOut"];
export type SchedulePreview = Schemas["SchedulePreview"];
