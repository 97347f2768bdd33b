import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SUMMARY_SECTIONS } from "@unforget/compact";
import { type AnthropicFakeServer, startAnthropicFake } from "@unforget/testing/fakes";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSession } from "../src/load-session.ts";
import { checkRequestBody } from "./check-request.ts";
import { runInProcess } from "./run-cli.ts";

/**
 * A summary in the nine sections the summary contract requires, as a model following the prompt writes it:
 * every user message quoted under "All User Messages".
 */
function modelSummary(userMessages: readonly string[]): string {
  const sections = SUMMARY_SECTIONS.map((title, index) => {
    const body =
      title === "All User Messages"
        ? userMessages.map((text) => `- "${text}"`).join("\n")
        : `From the model: ${title.toLowerCase()}.`;
    return `## ${index + 1}. ${title}\n${body}`;
  });
  return `<summary>\n${sections.join("\n\n")}\n</summary>`;
}

/**
 * `replay SESSION --window 16K --summarizer model` through the real Anthropic SDK against the local fake: the
 * provider writes the summaries, the summariser's requests are dumped, and later requests carry the summary.
 * SESSION must need summaries at 16K (tool outputs too short for the cheap layers to be enough).
 */
export function describeModelSummaries(SESSION: string): void {
  describe("replay --summarizer model, through the real Anthropic SDK against the local fake", () => {
    let fake: AnthropicFakeServer;
    const scratch = mkdtempSync(join(tmpdir(), "unforget-model-summary-"));
    beforeAll(async () => {
      const { messages } = await loadSession(SESSION);
      const userMessages = messages
        .filter((message) => message.role === "user" && !message.isMeta && !message.isObservation)
        .map((message) =>
          message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n"),
        )
        .filter((text) => text.length > 0);
      fake = await startAnthropicFake({ defaultReply: { kind: "reply", text: modelSummary(userMessages) } });
    });
    afterAll(async () => {
      await fake.close();
      rmSync(scratch, { recursive: true, force: true });
    });

    it("has the configured provider write the summaries and dumps the summariser's requests", async () => {
      const dump = join(scratch, "dump");
      const result = await runInProcess(
        ["replay", SESSION, "--window", "16K", "--summarizer", "model", "--json", "--dump-requests", dump],
        { UNFORGET_PROVIDER: "anthropic", ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url },
      );
      expect(result.stderr).not.toMatch(/unforget: /);
      expect(result.code).toBe(0);
      const stats = JSON.parse(result.stdout);
      expect(stats.summarizer).toBe("model");
      expect(stats.summarizerCalls).toBeGreaterThan(0);
      expect(stats.overflows).toBe(0);
      expect(stats.violations).toEqual([]);
      const summaryRequests = readdirSync(join(dump, "summarizer")).sort();
      const sent = fake.requests.filter((request) => request.path.endsWith("/messages"));
      expect(summaryRequests.length).toBe(sent.length);
      // Each dump is exactly what the provider sent (the provider adds only `stream` to a streamed call).
      summaryRequests.forEach((file, index) => {
        const { stream: _stream, ...body } = (sent[index]?.body ?? {}) as Record<string, unknown>;
        expect(JSON.parse(readFileSync(join(dump, "summarizer", file), "utf8")), file).toEqual(body);
      });
      for (const file of summaryRequests) {
        expect(file).toMatch(/^\d{6}-\d+\.json$/);
        const body = JSON.parse(readFileSync(join(dump, "summarizer", file), "utf8"));
        expect(checkRequestBody(body), file).toEqual([]);
        expect(JSON.stringify(body.messages.at(-1))).toContain("summary");
      }
      // The summary the model wrote is what later requests carry.
      const calls = readdirSync(dump).filter((name) => name.endsWith(".json"));
      expect(
        calls.some((file) =>
          readFileSync(join(dump, file), "utf8").includes("From the model: current work."),
        ),
      ).toBe(true);
    });
  });
}
