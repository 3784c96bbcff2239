/**
 * Edit and branch: a chat's messages form a tree, and the transcript shows one branch of it. Each stored item
 * carries its message's `message_id`, `parent_id` and `sibling_ids` (the messages continuing from the same
 * parent). Here: where the controls go — on a user message (edit it: a new sibling turn; ‹ i / n › between its
 * versions), and on the last answer of a turn (regenerate it: a new sibling answer; ‹ i / n › between answers).
 */

import type { Message } from "../api/client";

export interface BranchPoint {
  /** The message whose versions are switched between (a user turn, or the first answer to one). */
  messageId: number;
  /** All versions, oldest first (this one included). */
  siblings: number[];
  /** The message a new version continues from (null: the chat's first turn). */
  parentId: number | null;
  /** For an answer: the user message it answers (a regenerate's parent) and that message's transcript item. */
  userMessageId: number | null;
  userItemId: string | null;
}

/** "2 / 3": the version shown and how many there are. */
export function position(point: BranchPoint): { index: number; count: number } {
  return { index: point.siblings.indexOf(point.messageId) + 1, count: point.siblings.length };
}

/** The sibling `step` versions away (‹ is -1, › is +1), or null at either end. */
export function sibling(point: BranchPoint, step: number): number | null {
  const at = point.siblings.indexOf(point.messageId) + step;
  return at >= 0 && at < point.siblings.length ? point.siblings[at]! : null;
}

/** The branch controls by transcript item id: user items, and the last assistant text of each turn. */
export function branchPoints(messages: Message[]): Map<string, BranchPoint> {
  const points = new Map<string, BranchPoint>();
  let user: Message | null = null;
  let firstAnswer: Message | null = null;
  let lastAnswerItem: string | null = null;
  const closeTurn = () => {
    if (user && firstAnswer && lastAnswerItem && firstAnswer.message_id != null) {
      points.set(lastAnswerItem, {
        messageId: firstAnswer.message_id,
        siblings: firstAnswer.sibling_ids ?? [firstAnswer.message_id],
        parentId: user.message_id ?? null,
        userMessageId: user.message_id ?? null,
        userItemId: user.id,
      });
    }
  };
  for (const message of messages) {
    if (message.message_id == null) continue; // an older server: no tree
    if (message.role === "user") {
      closeTurn();
      user = message;
      firstAnswer = null;
      lastAnswerItem = null;
      points.set(message.id, {
        messageId: message.message_id,
        siblings: message.sibling_ids ?? [message.message_id],
        parentId: message.parent_id ?? null,
        userMessageId: null,
        userItemId: null,
      });
      continue;
    }
    if (user && firstAnswer === null && message.parent_id === user.message_id) firstAnswer = message;
    if (message.role === "assistant" && message.text) lastAnswerItem = message.id;
  }
  closeTurn();
  return points;
}

/** The items of `messages` before the user turn `item` (editing it) or up to it (regenerating its answer). */
export function cutAt(messages: Message[], itemId: string, keepIt: boolean): Message[] {
  const at = messages.findIndex((m) => m.id === itemId);
  return at < 0 ? messages : messages.slice(0, keepIt ? at + 1 : at);
}

/** The transcript item after which the model reads a summary instead of the turns (null: nothing summarised). */
export function summaryMarkerAfter(messages: Message[], summarisedUpto: number | null | undefined): string | null {
  if (summarisedUpto == null) return null;
  const covered = messages.filter((m) => m.message_id != null && m.message_id <= summarisedUpto);
  return covered.length && covered.length < messages.length ? covered[covered.length - 1]!.id : null;
}
