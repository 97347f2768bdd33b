import { afterEach, beforeEach } from "vitest";

/**
 * Sets up a fresh fixture before every test of the enclosing `describe` and tears it down after each; the
 * function returned gives the running test's fixture.
 */
export function fixturePerTest<Fixture extends { teardown(): Promise<void> }>(
  setup: () => Promise<Fixture>,
): () => Fixture {
  let fixture: Fixture;
  beforeEach(async () => {
    fixture = await setup();
  });
  afterEach(async () => {
    await fixture.teardown();
  });
  return () => fixture;
}
