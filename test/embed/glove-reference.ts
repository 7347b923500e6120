/**
 * An independent reference for the offline model: reads the word table out of
 * onnx/model.onnx and the vocabulary out of tokenizer.json, and embeds a text
 * the way the model is specified to (NFKC + lowercase, split on whitespace and
 * punctuation like BertPreTokenizer, [CLS] prepended, unknown words -> [UNK],
 * mean of rows, L2 normalise), without transformers.js or ONNX Runtime.
 */

const PUNCT = '\\p{P}\\u0021-\\u002F\\u003A-\\u0040\\u005B-\\u0060\\u007B-\\u007E';
const TOKEN = new RegExp(`[^\\s${PUNCT}]+|[${PUNCT}]`, 'gu');

/** Reads a protobuf varint at `at`; returns [value, next offset]. */
function varint(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let scale = 1;
  let i = at;
  for (;;) {
    const b = bytes[i++]!;
    value += (b & 0x7f) * scale;
    if (b < 0x80) return [value, i];
    scale *= 128;
  }
}

/** The length-delimited fields of one protobuf message, by field number (scalars are skipped). */
function fields(bytes: Uint8Array): Map<number, Uint8Array[]> {
  const out = new Map<number, Uint8Array[]>();
  let at = 0;
  while (at < bytes.length) {
    const [tag, afterTag] = varint(bytes, at);
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    if (wire === 0) at = varint(bytes, afterTag)[1];
    else if (wire === 1) at = afterTag + 8;
    else if (wire === 5) at = afterTag + 4;
    else if (wire === 2) {
      const [length, start] = varint(bytes, afterTag);
      const list = out.get(field) ?? [];
      list.push(bytes.subarray(start, start + length));
      out.set(field, list);
      at = start + length;
    } else throw new RangeError(`unsupported wire type ${wire}`);
  }
  return out;
}

/** The [vocab, dims] initializer of the model: ModelProto.graph(7).initializer(5).raw_data(9). */
export function readTable(onnx: Uint8Array, dims: number): Float32Array {
  const graph = fields(onnx).get(7)?.[0];
  const initializer = graph === undefined ? undefined : fields(graph).get(5)?.[0];
  const raw = initializer === undefined ? undefined : fields(initializer).get(9)?.[0];
  if (raw === undefined || raw.byteLength % (dims * 4) !== 0) throw new RangeError('no embedding table found');
  const table = new Float32Array(raw.byteLength / 4);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  for (let i = 0; i < table.length; i++) table[i] = view.getFloat32(i * 4, true);
  return table;
}

/** Embeds `texts` by direct table lookup. */
export function referenceEmbed(
  tokenizer: unknown,
  onnx: Uint8Array,
  texts: readonly string[],
  dims = 100,
): Float32Array[] {
  const vocab = (tokenizer as { model: { vocab: Record<string, number> } }).model.vocab;
  const table = readTable(onnx, dims);
  const unk = vocab['[UNK]']!;
  const cls = vocab['[CLS]']!;
  return texts.map((text) => {
    const words = text.normalize('NFKC').toLowerCase().match(TOKEN) ?? [];
    const ids = [cls, ...words.map((w) => vocab[w] ?? unk)];
    const sum = new Float64Array(dims);
    for (const id of ids) for (let d = 0; d < dims; d++) sum[d] = sum[d]! + table[id * dims + d]!;
    let norm = 0;
    for (const x of sum) norm += x * x;
    norm = Math.sqrt(norm);
    return Float32Array.from(sum, (x) => x / norm);
  });
}
