/** A byte count for people: `812 B`, `256 KiB`, `3.8 MiB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${trim(bytes / 1024)} KiB`;
  if (bytes < 1024 * 1024 * 1024) return `${trim(bytes / (1024 * 1024))} MiB`;
  return `${trim(bytes / (1024 * 1024 * 1024))} GiB`;
}

function trim(value: number): string {
  return value >= 100 ? String(Math.round(value)) : String(Number(value.toFixed(1)));
}
