import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { decodeRpm, RpmFormatError, type RpmMetadata } from './rpm-package';

/** A package file read from the command line, or why it cannot be used. */
export type LoadedFile =
  | { readonly ok: true; readonly path: string; readonly metadata: RpmMetadata }
  | { readonly ok: false; readonly path: string; readonly error: string; readonly kind: RpmFormatError['kind'] | 'missing' };

/** Reads and verifies package files given on a command line (relative to the cwd). */
export function loadPackageFiles(paths: readonly string[], verifyPayload = true): LoadedFile[] {
  return paths.map((path) => {
    let bytes: Buffer;
    try {
      bytes = readFileSync(resolve(path));
    } catch {
      return { ok: false, path, error: `open of ${path} failed: No such file or directory`, kind: 'missing' };
    }
    try {
      return { ok: true, path, metadata: decodeRpm(bytes, verifyPayload).metadata };
    } catch (error) {
      if (error instanceof RpmFormatError) {
        return { ok: false, path, error: `${path}: ${error.message}`, kind: error.kind };
      }
      throw error;
    }
  });
}
