import { describe, expect, it } from "vitest";

import type { Message } from "../api/client";
import { storedItems } from "../chat/transcript";
import { isInlineImage } from "./download";
import { formatSize } from "./upload";

describe("attachments", () => {
  it("shows sizes as people read them", () => {
    expect(formatSize(71)).toBe("71 B");
    expect(formatSize(48_213)).toBe("47 KB");
    expect(formatSize(3.4 * 1024 * 1024)).toBe("3.4 MB");
  });

  it("keeps a sent message's files on its transcript item, and adds nothing to a message without", () => {
    const file = { id: "a1", name: "screen.png", size: 71, content_type: "image/png", kind: "image" as const };
    const messages: Message[] = [
      { id: "1:0", role: "user", text: "look", run_id: "r0", created_at: "", attachments: [file] },
      { id: "2:0", role: "user", text: "plain", run_id: "r1", created_at: "" },
    ];
    const [withFile, plain] = storedItems(messages);
    expect(withFile).toMatchObject({ kind: "user", text: "look", attachments: [file] });
    expect(plain).not.toHaveProperty("attachments");
  });

  it("shows only the image types the server serves inline as thumbnails; anything else is a download", () => {
    for (const type of ["image/png", "image/jpeg", "IMAGE/GIF", "image/webp; q=1"]) expect(isInlineImage(type)).toBe(true);
    for (const type of ["image/svg+xml", "text/html", "application/pdf", "", undefined]) expect(isInlineImage(type)).toBe(false);
  });
});
