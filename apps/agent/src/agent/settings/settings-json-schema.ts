// The JSON Schema of the settings files: data only. `scripts/settings-validator.ts` compiles it ahead of time into
// `settings-validator.generated.ts`, so that start-up neither loads ajv nor compiles a schema.
import { MAX_WINDOW, MIN_WINDOW } from "../../parse-window.ts";

const THRESHOLD = {
  oneOf: [
    {
      type: "object",
      properties: { percent: { type: "number", exclusiveMinimum: 0, maximum: 100 } },
      required: ["percent"],
      additionalProperties: false,
    },
    {
      type: "object",
      properties: { tokens: { type: "integer", minimum: 1000 } },
      required: ["tokens"],
      additionalProperties: false,
    },
  ],
} as const;

const STRING_LIST = { type: "array", items: { type: "string" } } as const;

/** A number of tokens as a window: `200000`, or `"200K"`, `"1.5M"` (read by `parseWindow`). */
const WINDOW = {
  oneOf: [
    { type: "integer", minimum: MIN_WINDOW, maximum: MAX_WINDOW },
    { type: "string", pattern: "^\\s*\\d+(?:[_,]\\d{3})*(?:\\.\\d+)?\\s*[kKmM]?\\s*$" },
  ],
} as const;

/**
 * The keys of `~/.unforget/settings.json` and `.unforget/settings.json` (and `settings.local.json`). Hooks and
 * MCP servers are checked by their own parsers (`@unforget/hooks`, `@unforget/mcp`), which name the key too.
 */
export const SETTINGS_SCHEMA = {
  type: "object",
  additionalProperties: false,
  properties: {
    $schema: { type: "string" },
    model: { type: "string", minLength: 1 },
    provider: { enum: ["anthropic", "bedrock", "vertex"] },
    contextWindow: WINDOW,
    models: {
      type: "object",
      additionalProperties: {
        type: "object",
        additionalProperties: false,
        properties: {
          contextWindow: { type: "integer", minimum: 1000 },
          maxOutputTokens: { type: "integer", minimum: 1 },
        },
      },
    },
    compaction: {
      type: "object",
      additionalProperties: false,
      properties: {
        threshold: THRESHOLD,
        thresholds: { type: "object", additionalProperties: THRESHOLD },
        proactive: { enum: ["auto", "off"] },
        emergency: { enum: ["on", "off"] },
        layers: { type: "object", additionalProperties: { type: "boolean" } },
        pauseAfterAuto: { type: "boolean" },
      },
    },
    hooks: { type: "object" },
    permissions: {
      type: "object",
      additionalProperties: false,
      properties: {
        allow: STRING_LIST,
        deny: STRING_LIST,
        ask: STRING_LIST,
        defaultMode: { enum: ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"] },
        additionalDirectories: STRING_LIST,
      },
    },
    memory: {
      type: "object",
      additionalProperties: false,
      properties: {
        consent: { enum: ["propose", "auto", "off"] },
        recall: { enum: ["every-prompt", "first-prompt", "off"] },
        sessionNotes: { type: "boolean" },
      },
    },
    history: { type: "boolean" },
    summarizer: {
      type: "object",
      additionalProperties: false,
      properties: {
        model: { type: "string", minLength: 1 },
        provider: { enum: ["anthropic", "bedrock", "vertex"] },
      },
      required: ["model"],
    },
    mcpServers: { type: "object" },
    plugins: STRING_LIST,
    trustedProjects: {
      type: "object",
      additionalProperties: {
        type: "object",
        properties: { fingerprint: { type: "string" }, trustedAt: { type: "string" }, items: STRING_LIST },
        required: ["fingerprint"],
      },
    },
  },
} as const;
