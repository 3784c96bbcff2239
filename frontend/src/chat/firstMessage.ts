/**
 * The landing page's first message, handed to the chat it creates: the chat is saved only when a message is
 * sent, and the message then goes through the chat's own send (its title, its pending turn, the live run).
 */

import type { RunMode } from "../api/client";

export interface FirstMessage {
  chatId: string;
  text: string;
  model: string;
  mode: RunMode;
  tools: string[] | null;
}

let pending: FirstMessage | null = null;

export function handOver(message: FirstMessage): void {
  pending = message;
}

/** The message waiting for chat `chatId` (once: taking it clears it). */
export function takeFirstMessage(chatId: string): FirstMessage | null {
  if (pending?.chatId !== chatId) return null;
  const message = pending;
  pending = null;
  return message;
}
