import { readFileSync } from 'node:fs';

/** The package version, shown by `/health`, the OpenAPI document and `--version`. */
export const VERSION: string = (() => {
  try {
    return JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version as string;
  } catch {
    return '0.0.0';
  }
})();
