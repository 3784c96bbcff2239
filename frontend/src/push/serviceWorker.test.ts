import { beforeEach, describe, expect, it } from "vitest";

import source from "../../public/sw.js?raw";

// public/sw.js run as written, against stand-ins for the worker's globals (self, clients, registration).
type Handler = (event: Record<string, unknown>) => void;

interface Shown {
  title: string;
  options: NotificationOptions & { renotify?: boolean };
}

interface FakeWindow {
  url: string;
  focused: boolean;
  navigable: boolean;
  focus(): Promise<FakeWindow>;
  navigate(url: string): Promise<FakeWindow>;
}

let handlers: Record<string, Handler>;
let shown: Shown[];
let windows: FakeWindow[];
let opened: string[];

function fakeWindow(url: string, navigable = true): FakeWindow {
  const w: FakeWindow = {
    url,
    focused: false,
    navigable,
    focus: async () => {
      w.focused = true;
      return w;
    },
    navigate: async (to: string) => {
      if (!w.navigable) throw new TypeError("not controlled");
      w.url = to;
      return w;
    },
  };
  return w;
}

beforeEach(() => {
  handlers = {};
  shown = [];
  windows = [];
  opened = [];
  const self = {
    location: new URL("https://pa.example/sw.js"),
    addEventListener: (name: string, handler: Handler) => (handlers[name] = handler),
    registration: {
      showNotification: async (title: string, options: Shown["options"]) => void shown.push({ title, options }),
    },
    clients: {
      matchAll: async () => windows,
      openWindow: async (url: string) => void opened.push(url),
      claim: async () => undefined,
    },
  };
  new Function("self", "caches", "fetch", source)(self, {}, () => Promise.reject(new Error("offline")));
});

async function dispatch(name: string, event: Record<string, unknown>): Promise<void> {
  let pending: Promise<unknown> = Promise.resolve();
  handlers[name]!({ ...event, waitUntil: (p: Promise<unknown>) => (pending = p) });
  await pending;
}

const pushData = (text: string) => ({
  text: () => text,
  json: () => JSON.parse(text) as unknown,
});

const APPROVAL = {
  type: "approval_requested",
  title: "Approval needed",
  body: "send_email is waiting for your approval",
  url: "/chats/c1",
  tag: "approval-a1",
  approval_id: "a1",
  run_id: "r1",
  chat_id: "c1",
};

describe("the push handler", () => {
  it("shows the approval as a notification that opens its chat", async () => {
    await dispatch("push", { data: pushData(JSON.stringify(APPROVAL)) });
    expect(shown).toEqual([
      {
        title: "Approval needed",
        options: { body: "send_email is waiting for your approval", icon: "/icon-192.png", tag: "approval-a1", renotify: false, data: { url: "/chats/c1" } },
      },
    ]);
  });

  it.each([
    ["not JSON", pushData("hello there")],
    ["JSON without a title", pushData('{"body": "x"}')],
    ["a JSON string", pushData('"Approval needed"')],
    ["no payload", null],
  ])("shows a generic notification for %s", async (_, data) => {
    await dispatch("push", { data });
    expect(shown).toHaveLength(1);
    expect(shown[0]!.title).toBe("Personal Agent");
    expect(shown[0]!.options.data).toEqual({ url: "/approvals" });
    expect(shown[0]!.options.tag).toBeUndefined();
  });

  it("never sends a click to another site", async () => {
    for (const url of ["https://evil.example/x", "//evil.example/x", 42]) {
      shown = [];
      await dispatch("push", { data: pushData(JSON.stringify({ ...APPROVAL, url })) });
      expect(shown[0]!.options.data).toEqual({ url: "/approvals" });
    }
  });
});

describe("a click on the notification", () => {
  function click(url: unknown) {
    const notification = { data: { url }, closed: false, close: () => (notification.closed = true) };
    return { notification, done: dispatch("notificationclick", { notification }) };
  }

  it("closes it, focuses the open web chat and navigates it to the chat", async () => {
    windows = [fakeWindow("https://other.example/"), fakeWindow("https://pa.example/approvals")];
    const { notification, done } = click("/chats/c1");
    await done;
    expect(notification.closed).toBe(true);
    expect(windows[1]!.focused).toBe(true);
    expect(windows[1]!.url).toBe("https://pa.example/chats/c1");
    expect(windows[0]!.focused).toBe(false);
    expect(opened).toEqual([]);
  });

  it("opens a new window when no web chat is open, or the open one cannot be steered", async () => {
    await click("/chats/c1").done;
    expect(opened).toEqual(["https://pa.example/chats/c1"]);
    windows = [fakeWindow("https://pa.example/", false)];
    await click("https://evil.example/").done;
    expect(opened).toEqual(["https://pa.example/chats/c1", "https://pa.example/approvals"]);
  });
});
