import { createFakeModelProvider, type FakeModelProvider } from "@unforget/testing/fakes";
import { beforeEach } from "vitest";

/**
 * One scripted in-process provider for the test file (from `@unforget/testing/fakes`, so memory's tests do not
 * depend on a provider package), reset before each test so that no scripted step leaks from one to the next.
 */
export function useFakeProvider(): { fake: () => FakeModelProvider; provider: () => FakeModelProvider } {
  const provider = createFakeModelProvider();
  beforeEach(() => {
    provider.reset();
  });
  return { fake: () => provider, provider: () => provider };
}
