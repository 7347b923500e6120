/**
 * The vectors of the live memories, for the map. engram's public API has no
 * vector reader, so they are read from an export of the store (the one public
 * place vectors leave it), skipping every line that is not a memory. Capped at
 * `limit` points, taken evenly across the store.
 */
import type { Tier } from '../../lib/index.js';

/** One memory on the map. */
export interface MemoryVector {
  id: string;
  text: string;
  tier: Tier;
  userId?: string;
  agentId?: string;
  projectId?: string;
  vector: Float32Array;
}

const MEMORY_LINE = '{"type":"memory"';

function decode(base64: string): Float32Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}

interface MemoryLine {
  row: {
    id: string;
    text: string;
    tier: Tier;
    userId?: string;
    agentId?: string;
    projectId?: string;
    deletedAt?: number;
    expiresAt?: number;
  };
  vector: { data: string } | null;
}

/**
 * Live memories with vectors from an export file's text, at most `limit`, evenly spaced.
 * @example
 * const points = memoryVectors(await (await engram.export()).text(), Date.now(), 5000)
 */
export function memoryVectors(
  exportText: string,
  now: number,
  limit: number,
): { points: MemoryVector[]; live: number } {
  const lines: MemoryLine[] = [];
  let start = 0;
  while (start < exportText.length) {
    let end = exportText.indexOf('\n', start);
    if (end === -1) end = exportText.length;
    if (exportText.startsWith(MEMORY_LINE, start)) {
      const line = JSON.parse(exportText.slice(start, end)) as MemoryLine;
      const { deletedAt, expiresAt } = line.row;
      if (line.vector !== null && deletedAt === undefined && (expiresAt === undefined || expiresAt > now))
        lines.push(line);
    }
    start = end + 1;
  }
  const step = Math.max(1, lines.length / Math.max(1, limit));
  const points: MemoryVector[] = [];
  for (let i = 0; i < lines.length && points.length < limit; i += step) {
    const { row, vector } = lines[Math.floor(i)]!;
    const point: MemoryVector = { id: row.id, text: row.text, tier: row.tier, vector: decode(vector!.data) };
    if (row.userId !== undefined) point.userId = row.userId;
    if (row.agentId !== undefined) point.agentId = row.agentId;
    if (row.projectId !== undefined) point.projectId = row.projectId;
    points.push(point);
  }
  return { points, live: lines.length };
}
