import { createMessage, type Message } from "@unforget/core";
import { describe, expect, it, vi } from "vitest";
import { createContextManager } from "../manager/context-manager.ts";
import { createHostConversation, type HostCodec, type HostEvent } from "./host-conversation.ts";

/** A toy host: plain objects with an optional id; "tool" messages carry a tool result, "odd" ones a shape nobody models. */
interface Toy {
  id?: string;
  role: "system" | "user" | "assistant" | "tool" | "odd";
  text: string;
  call?: string;
}

const codec: HostCodec<Toy> = {
  decode(toy, context) {
    const id = toy.id ?? "";
    if (toy.role === "assistant" && toy.call)
      return createMessage("assistant", [{ type: "tool_use", id: toy.call, name: "Read", input: {} }], {
        id,
      });
    if (toy.role === "tool" && toy.call)
      return createMessage("user", [{ type: "tool_result", tool_use_id: toy.call, content: toy.text }], {
        id,
      });
    if (toy.role === "odd") {
      context.reportUnknownShape("role odd", "a message with role odd was kept as it is");
      return createMessage("user", [{ type: "unknown", original: { type: "toy", toy } }], {
        id,
        isMeta: true,
      });
    }
    return createMessage(toy.role === "assistant" ? "assistant" : "user", toy.text, { id });
  },
  encode(message) {
    return message.content.map((block) => {
      if (block.type === "tool_use") return { role: "assistant", text: "", call: block.id } satisfies Toy;
      if (block.type === "tool_result")
        return {
          role: "tool",
          text: typeof block.content === "string" ? block.content : "",
          call: block.tool_use_id,
        } satisfies Toy;
      if (block.type === "unknown") return (block.original as unknown as { toy: Toy }).toy;
      return { role: message.role, text: block.type === "text" ? block.text : "" } satisfies Toy;
    });
  },
  equal: (a, b) => JSON.stringify(a) === JSON.stringify(b),
  systemText: (toy) => (toy.role === "system" ? toy.text : undefined),
};

const manager =
  (contextWindow = 40_000) =>
  () =>
    createContextManager({ model: "toy", limits: { contextWindow, maxOutputTokens: 4_000 } });

const round = (index: number, size: number): Toy[] => [
  { role: "assistant", text: "", call: `call_${index}` },
  { role: "tool", text: `output ${index} `.repeat(size), call: `call_${index}` },
];

describe("createHostConversation", () => {
  it("gives the manager only the new tail, whether the host keeps its whole list or adopts the projection", async () => {
    const conversation = createHostConversation({ codec, createManager: manager() });
    const kept: Toy[] = [{ role: "user", text: "Read the files." }, ...round(0, 10)];
    expect(conversation.append(kept)).toHaveLength(3);
    const first = await conversation.prepare();
    expect(first.changed).toBe(false);
    expect(first.messages).toEqual(kept);
    expect(first.messages[1]).toBe(kept[1]);

    // The host keeps its own list (the AI SDK 6 way): rebuilt objects, equal content.
    kept.push(...round(1, 10));
    const rebuilt = kept.map((toy) => ({ ...toy }));
    expect(conversation.append(rebuilt).map((message) => message.role)).toEqual(["assistant", "user"]);
    await conversation.prepare();

    // The host adopted what was returned and appended to it (the AI SDK 7 and LangChain state way).
    const adopted = [...(await conversation.prepare()).messages, ...round(2, 10)];
    expect(conversation.append(adopted)).toHaveLength(2);
    expect(conversation.messages).toHaveLength(7);
  });

  it("returns the host's own objects for untouched messages and converts a changed one once, then reuses it", async () => {
    const conversation = createHostConversation({ codec, createManager: manager(16_000) });
    let host: Toy[] = [{ role: "user", text: "Read everything." }];
    let compacted: Toy[] | undefined;
    for (let turn = 0; turn < 40 && !compacted; turn++) {
      host = [...host, ...round(turn, 200)];
      conversation.append(host);
      const prepared = await conversation.prepare();
      if (prepared.changed) compacted = prepared.messages;
    }
    expect(compacted).toBeDefined();
    // The first user message survived untouched: it is the host's object itself.
    expect(compacted).toContain(host[0]);
    // The next call with nothing new returns the very same objects (a stable prefix for the prompt cache).
    conversation.append(compacted!);
    const again = await conversation.prepare();
    expect(again.changed).toBe(false);
    for (const [index, message] of again.messages.entries()) expect(message).toBe(compacted![index]);
  });

  it("continues from the longest list it knows, never re-appending what an older projection lacked", async () => {
    // The host keeps its whole list (the AI SDK 6 way) while the projections it is sent get compacted.
    const conversation = createHostConversation({ codec, createManager: manager(16_000) });
    const kept: Toy[] = [{ role: "user", text: "Read everything." }];
    let compactions = 0;
    for (let turn = 0; turn < 40; turn++) {
      kept.push(...round(turn, 200));
      conversation.append([...kept]);
      if ((await conversation.prepare()).changed) compactions++;
      expect(conversation.messages, `turn ${turn}`).toHaveLength(kept.length);
    }
    expect(compactions).toBeGreaterThan(0);
    expect(new Set(conversation.messages.map((message) => message.id)).size).toBe(kept.length);
  });

  it("keeps a leading system message out of the ladder, sends it first and counts it", async () => {
    const plain = createHostConversation({ codec, createManager: manager() });
    const withSystem = createHostConversation({ codec, createManager: manager() });
    const system: Toy = { role: "system", text: "You are careful. ".repeat(400) };
    const body: Toy[] = [{ role: "user", text: "Hello" }];
    plain.append(body);
    withSystem.append([system, ...body]);
    const a = await plain.prepare();
    const b = await withSystem.prepare();
    expect(b.messages[0]).toBe(system);
    expect(withSystem.messages).toHaveLength(1);
    expect(b.result.tokens - a.result.tokens).toBeGreaterThan(1_000);
  });

  it("starts a new manager when the host rewrote its conversation, and says so", async () => {
    const events: HostEvent[] = [];
    const conversation = createHostConversation({
      codec,
      createManager: manager(),
      onEvent: (event) => {
        if (event.type === "conversation-reset" || event.type === "unknown-shape") events.push(event);
      },
    });
    conversation.append([{ role: "user", text: "one" }, ...round(0, 5)]);
    await conversation.prepare();
    const before = conversation.manager;
    conversation.append([{ role: "user", text: "two" }]);
    await conversation.prepare();
    expect(conversation.manager).not.toBe(before);
    expect(conversation.messages.map((message) => message.role)).toEqual(["user"]);
    expect(events).toEqual([expect.objectContaining({ type: "conversation-reset", previousMessages: 3 })]);
  });

  it("never drops a message whose host id repeats an earlier one", async () => {
    const conversation = createHostConversation({ codec, createManager: manager() });
    const host: Toy[] = [
      { id: "same", role: "user", text: "first" },
      { id: "same", role: "assistant", text: "second" },
      { role: "user", text: "third" },
    ];
    const added = conversation.append(host);
    expect(new Set(added.map((message: Message) => message.id)).size).toBe(3);
    const prepared = await conversation.prepare();
    expect(prepared.messages).toEqual(host);
  });

  it("reports an unknown shape once, keeps it, and warns on stderr when nobody listens", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const conversation = createHostConversation({ codec, createManager: manager() });
      const odd: Toy = { role: "odd", text: "?" };
      conversation.append([{ role: "user", text: "hi" }, odd, { ...odd }]);
      const prepared = await conversation.prepare();
      expect(prepared.messages.filter((toy) => toy.role === "odd")).toHaveLength(2);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toContain("role odd");
    } finally {
      warn.mockRestore();
    }
  });
  it("stamps a response with the time of the call that wrote it, so the time the user took counts as idle", async () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const clock = () => now;
    const conversation = createHostConversation({
      codec,
      clock,
      createManager: () =>
        createContextManager({
          model: "toy",
          limits: { contextWindow: 40_000, maxOutputTokens: 4_000 },
          clock,
        }),
    });
    const host: Toy[] = [{ role: "user", text: "Read the files." }];
    for (let index = 0; index < 8; index++) {
      host.push(...round(index, 200));
      conversation.append(host);
      await conversation.prepare();
      now += 2_000;
    }
    // The last call's answer comes back, and the user writes again an hour and a half later.
    now += 90 * 60_000;
    host.push({ role: "assistant", text: "Read them all." }, { role: "user", text: "Now fix the parser." });
    const added = conversation.append(host);
    expect(Date.parse(added[0]!.timestamp)).toBeLessThan(now - 90 * 60_000);
    const next = await conversation.prepare();
    // The prompt cache has expired: the old outputs are cleared at no cost.
    expect(next.result.actions.map((action) => action.layer)).toContain("microcompact");
  });
});
