import { MemoryArgumentError } from "@unforget/memory";

/** A namespace: `team/<team>/project/<project>`, each name letters, digits, `.`, `_` or `-` (at most 100). */
const NAMESPACE = /^team\/[A-Za-z0-9][A-Za-z0-9._-]{0,99}\/project\/[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** Checks a namespace's shape; throws `MemoryArgumentError` saying what one looks like. */
export function checkNamespace(namespace: unknown): string {
  if (typeof namespace !== "string" || !NAMESPACE.test(namespace) || /\.\.|\/\./.test(namespace)) {
    throw new MemoryArgumentError(
      `Namespace ${JSON.stringify(String(namespace).slice(0, 120))} is not valid: use team/<team>/project/<project>, each name made of letters, digits, ".", "_" or "-".`,
      { argument: "namespace" },
    );
  }
  return namespace;
}

/** Checks that `namespace` is one the store was opened for (before any I/O). */
export function checkAllowed(namespace: string, allowed: ReadonlySet<string>): string {
  checkNamespace(namespace);
  if (!allowed.has(namespace)) {
    throw new MemoryArgumentError(
      `Namespace ${namespace} is not one this store was opened for (${[...allowed].join(", ")}); open the store with it in \`namespaces\`.`,
      { argument: "namespace" },
    );
  }
  return namespace;
}
