export const describeCode = (code: string): string => `[${code}]`;
