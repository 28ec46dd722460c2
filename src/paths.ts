// Where the package's own files are, from both src/ (tsx) and dist/ (compiled).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const MIGRATIONS_DIR = join(PACKAGE_ROOT, 'migrations');
