import type { CountTokensRequest, ToolDefinition } from "@unforget/core";

/** Tool definitions whose `type` or name starts with this are beta-only and rejected by counting endpoints. */
const TOOL_SEARCH_PREFIX = "tool_search";
/** Per-tool fields that only the beta messages endpoint accepts. */
const BETA_ONLY_TOOL_FIELDS = ["defer_loading", "allowed_callers", "input_examples"] as const;

function isToolSearchTool(tool: ToolDefinition): boolean {
  const type = (tool as { type?: unknown }).type;
  return (
    tool.name.startsWith(TOOL_SEARCH_PREFIX) ||
    (typeof type === "string" && type.startsWith(TOOL_SEARCH_PREFIX))
  );
}

/**
 * A copy of the request without what token-counting endpoints reject: tool-search tools and beta-only tool
 * fields (`defer_loading`, …). The input request is not modified; a request with nothing to strip is
 * returned as is.
 */
export function stripUncountableFields(request: CountTokensRequest): CountTokensRequest {
  const tools = request.tools;
  if (tools === undefined || tools.length === 0) return request;
  let changed = false;
  const kept: ToolDefinition[] = [];
  for (const tool of tools) {
    if (isToolSearchTool(tool)) {
      changed = true;
      continue;
    }
    if (BETA_ONLY_TOOL_FIELDS.some((field) => field in tool)) {
      // The copy is still a tool definition: the beta-only fields are extras a caller added beyond its type.
      const copy: ToolDefinition = { ...tool };
      for (const field of BETA_ONLY_TOOL_FIELDS) Reflect.deleteProperty(copy, field);
      kept.push(copy);
      changed = true;
    } else {
      kept.push(tool);
    }
  }
  return changed ? { ...request, tools: kept } : request;
}
