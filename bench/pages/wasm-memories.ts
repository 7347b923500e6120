/**
 * Every WebAssembly memory a benchmark page creates, to report its size:
 * DevTools' heap figures count neither a WASM memory (backingStorageSize
 * leaves it out) nor reliably its growth, so the page counts them itself.
 * Importing this module installs the hooks: import it before anything that
 * instantiates WebAssembly.
 */

const memories: WebAssembly.Memory[] = [];

const collect = (instance: WebAssembly.Instance): void => {
  for (const value of Object.values(instance.exports)) if (value instanceof WebAssembly.Memory) memories.push(value);
};
// Emscripten may create the memory itself and import it into the instance: count constructed memories too.
const NativeMemory = WebAssembly.Memory;
(WebAssembly as unknown as { Memory: unknown }).Memory = function Memory(
  descriptor: WebAssembly.MemoryDescriptor,
): WebAssembly.Memory {
  const memory = new NativeMemory(descriptor);
  memories.push(memory);
  return memory;
};
(WebAssembly.Memory as unknown as { prototype: unknown }).prototype = NativeMemory.prototype;
const instantiate = WebAssembly.instantiate.bind(WebAssembly) as (...args: unknown[]) => Promise<unknown>;
(WebAssembly as unknown as { instantiate: unknown }).instantiate = async (...args: unknown[]): Promise<unknown> => {
  const out = await instantiate(...args);
  collect(out instanceof WebAssembly.Instance ? out : (out as { instance: WebAssembly.Instance }).instance);
  return out;
};
const streaming = WebAssembly.instantiateStreaming.bind(WebAssembly);
WebAssembly.instantiateStreaming = async (
  ...args: Parameters<typeof WebAssembly.instantiateStreaming>
): Promise<WebAssembly.WebAssemblyInstantiatedSource> => {
  const out = await streaming(...args);
  collect(out.instance);
  return out;
};

/** Bytes of every WebAssembly memory the page has created, at their current size. */
export function wasmBytes(): number {
  return [...new Set(memories)].reduce((sum, m) => sum + m.buffer.byteLength, 0);
}
