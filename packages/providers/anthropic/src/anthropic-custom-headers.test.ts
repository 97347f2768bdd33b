import { describe, expect, it } from "vitest";
import { parseCustomHeaders } from "./anthropic-custom-headers.ts";

describe("parseCustomHeaders", () => {
  it("reads one `Name: value` per line, splitting at the first colon and trimming both sides", () => {
    expect(parseCustomHeaders("X-Tenant: a\r\nX-Route:  eu-west :8443 \n")).toEqual({
      "X-Tenant": "a",
      "X-Route": "eu-west :8443",
    });
  });

  it("skips blank lines, lines without a colon and invalid names", () => {
    expect(parseCustomHeaders("\n  \nno colon here\n: nameless\nbad name: x\nX-Ok: 1")).toEqual({
      "X-Ok": "1",
    });
    expect(parseCustomHeaders(undefined)).toEqual({});
  });

  it("lets a later line replace an earlier one with the same name in any case", () => {
    expect(parseCustomHeaders("X-Tenant: a\nx-tenant: b")).toEqual({ "x-tenant": "b" });
  });
});
