/** Projects (issue 38): the caller's projects, the one the chat list is filtered by, and the calls that change them. */

import { reactive } from "vue";

import { call, type Ok } from "../api/client";
import { describeError } from "../api/http";

export type Project = Ok<"list_projects">["items"][number];
export type ProjectDetail = Ok<"get_project">;
export type ProjectRole = Project["role"];

export const projects = reactive({
  items: [] as Project[],
  /** The project the chat list shows (null: all my chats). */
  filter: null as string | null,
  error: null as string | null,
});

export async function loadProjects(): Promise<void> {
  try {
    projects.items = (await call("list_projects")).items;
    projects.error = null;
    if (projects.filter && !projects.items.some((p) => p.id === projects.filter)) projects.filter = null;
  } catch (err) {
    projects.error = describeError(err);
  }
}

export async function createProject(name: string, instructions: string, agent: string | null): Promise<ProjectDetail> {
  const made = await call("create_project", { body: { name, instructions, agent } });
  await loadProjects();
  return made;
}

export async function updateProject(
  id: string,
  body: { name?: string; instructions?: string; agent?: string | null },
): Promise<ProjectDetail> {
  const changed = await call("update_project", { path: { project_id: id }, body });
  await loadProjects();
  return changed;
}

export async function deleteProject(id: string): Promise<void> {
  await call("delete_project", { path: { project_id: id } });
  await loadProjects();
}

const USER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Add a member of the org, named by e-mail or user id, or change their role. */
export function addMember(id: string, who: string, role: ProjectRole) {
  const person = USER_ID.test(who) ? { user_id: who } : { email: who };
  return call("add_project_member", { path: { project_id: id }, body: { ...person, role } });
}

export function removeMember(id: string, userId: string) {
  return call("remove_project_member", { path: { project_id: id, user_id: userId } });
}

/** Move a chat into a project (null: out of its project). */
export function moveChat(chatId: string, projectId: string | null) {
  return call("rename_chat", { path: { chat_id: chatId }, body: { project_id: projectId } });
}

/** Projects a chat may be moved into (the caller writes there). */
export function writableProjects(): Project[] {
  return projects.items.filter((p) => p.role !== "viewer");
}
