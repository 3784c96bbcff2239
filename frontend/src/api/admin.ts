/**
 * The admin console's API calls (providers and models, budgets, org settings, members, workflows and their
 * outputs, the approval audit). Typed by operation id from the generated schema, like `client.ts`.
 */

import { request } from "./http";
import type { In, Ok, QueryOf } from "./client";
import type { components } from "./schema";

const V1 = "/api/v1";
const path = (id: string) => encodeURIComponent(id);

export const adminApi = {
  listProviders: () => request<Ok<"list_providers">>("GET", `${V1}/admin/providers`),
  updateProvider: (id: string, body: In<"update_provider">) =>
    request<Ok<"update_provider">>("PATCH", `${V1}/admin/providers/${path(id)}`, { body }),
  updateModel: (providerId: string, modelId: string, body: In<"update_provider_model">) =>
    request<Ok<"update_provider_model">>("PATCH", `${V1}/admin/providers/${path(providerId)}/models/${path(modelId)}`, {
      body,
    }),

  budgetSpend: () => request<Ok<"list_budget_spend">>("GET", `${V1}/admin/budget-spend`),
  setBudget: (body: In<"set_budget">) => request<Ok<"set_budget">>("PUT", `${V1}/admin/budgets`, { body }),
  deleteBudget: (id: string) => request<void>("DELETE", `${V1}/admin/budgets/${path(id)}`),

  getOrgSettings: () => request<Ok<"get_org_settings">>("GET", `${V1}/admin/settings`),
  putOrgSettings: (body: In<"put_org_settings">) =>
    request<Ok<"put_org_settings">>("PUT", `${V1}/admin/settings`, { body }),

  listMembers: () => request<Ok<"list_org_members">>("GET", `${V1}/org/members`),
  removeMember: (userId: string) => request<void>("DELETE", `${V1}/org/members/${path(userId)}`),

  listWorkflows: () => request<Ok<"list_workflows">>("GET", `${V1}/workflows`),
  createWorkflow: (body: In<"create_workflow">) => request<Ok<"create_workflow">>("POST", `${V1}/workflows`, { body }),
  deleteWorkflow: (id: string) => request<void>("DELETE", `${V1}/workflows/${path(id)}`),
  testFire: (id: string, body: In<"test_fire_workflow"> = {}) =>
    request<Ok<"test_fire_workflow">>("POST", `${V1}/workflows/${path(id)}/test-fire`, { body }),
  workflowRuns: (id: string, query: QueryOf<"workflow_runs"> = {}) =>
    request<Ok<"workflow_runs">>("GET", `${V1}/workflows/${path(id)}/runs`, { query }),
  rotateSecret: (id: string, body: In<"rotate_workflow_signing_secret">) =>
    request<Ok<"rotate_workflow_signing_secret">>("POST", `${V1}/workflows/${path(id)}/signing-secret`, { body }),
  listOutputs: (id: string) => request<Ok<"list_workflow_outputs">>("GET", `${V1}/workflows/${path(id)}/outputs`),
  addOutput: (id: string, body: In<"add_workflow_output">) =>
    request<Ok<"add_workflow_output">>("POST", `${V1}/workflows/${path(id)}/outputs`, { body }),
  removeOutput: (id: string, outputId: string) =>
    request<void>("DELETE", `${V1}/workflows/${path(id)}/outputs/${path(outputId)}`),
  outputDeliveries: (id: string) =>
    request<Ok<"workflow_output_deliveries">>("GET", `${V1}/workflows/${path(id)}/output-deliveries`),
  redeliver: (id: string, deliveryId: string) =>
    request<Ok<"redeliver_workflow_output">>(
      "POST",
      `${V1}/workflows/${path(id)}/output-deliveries/${path(deliveryId)}/redeliver`,
    ),

  approvalAudit: (query: QueryOf<"approval_audit"> = {}) =>
    request<Ok<"approval_audit">>("GET", `${V1}/admin/approval-audit`, { query }),
};

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
