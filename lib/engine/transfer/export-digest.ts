/**
 * The digest an export file carries in its end line, so a file edited or cut
 * in transit is refused rather than half-imported: the SHA-256 of every line
 * before the end line (header and records), and the SHA-256 of the whole body.
 * A line whose digest differs is named by its number; a record removed (even
 * with the count fixed) shows as the first line that no longer matches.
 * It detects damage and careless edits, not a forger: anyone can recompute
 * SHA-256 (no key is involved).
 */
import { ImportError } from '../../errors.js';
import { sha256Hex } from '../../util/hash.js';

/** What the end line's `digest` holds. */
export interface ExportDigest {
  algorithm: 'SHA-256';
  /** Hex digits kept of each line's SHA-256. */
  lines: string[];
  /** SHA-256 of every line before the end line, newlines included. */
  body: string;
}

/** Hex digits kept per line: 128 bits. */
const LINE_DIGITS = 32;

/** The digest of `lines` (each without its newline), for the end line. */
export async function digestOf(lines: readonly string[]): Promise<ExportDigest> {
  const perLine = await Promise.all(lines.map(async (l) => (await sha256Hex(l)).slice(0, LINE_DIGITS)));
  return { algorithm: 'SHA-256', lines: perLine, body: await sha256Hex(lines.map((l) => `${l}\n`).join('')) };
}

function isDigest(value: unknown): value is ExportDigest {
  if (typeof value !== 'object' || value === null) return false;
  const d = value as Record<string, unknown>;
  return (
    d['algorithm'] === 'SHA-256' &&
    typeof d['body'] === 'string' &&
    Array.isArray(d['lines']) &&
    d['lines'].every((x) => typeof x === 'string')
  );
}

/**
 * Checks `lines` (the file's lines before its end line) against the digest in
 * the end line (at `endLine`, 1-based); throws ImportError naming the first line that differs.
 */
export async function verifyDigest(lines: readonly string[], digest: unknown, endLine: number): Promise<void> {
  if (!isDigest(digest))
    throw new ImportError(endLine, 'the end line has no valid SHA-256 digest: the file was edited or cut');
  const actual = await digestOf(lines);
  const n = Math.max(actual.lines.length, digest.lines.length);
  for (let i = 0; i < n; i++) {
    if (actual.lines[i] === digest.lines[i]) continue;
    if (i >= lines.length)
      throw new ImportError(
        endLine,
        `${digest.lines.length - lines.length} line(s) listed in the digest are missing: records were removed`,
      );
    if (i >= digest.lines.length) throw new ImportError(i + 1, 'is not in the digest: a record was added');
    throw new ImportError(
      i + 1,
      'does not match its SHA-256 digest: the line was edited, or a record before it removed',
    );
  }
  if (actual.body !== digest.body) throw new ImportError(endLine, 'the SHA-256 of the file body does not match');
}
