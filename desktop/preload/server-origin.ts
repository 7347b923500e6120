/**
 * Which servers the app may talk to, one rule for both sides of the bridge: the
 * renderer checks a URL the user typed before it saves it, and the main process
 * checks it again (the renderer is not trusted) before its request filter opens
 * to it. https anywhere; plain http only on this machine (127.0.0.1, localhost,
 * [::1]); never credentials in the URL. Pure: no Electron, no DOM, no Node.
 */

/** Longest server URL accepted. */
export const MAX_SERVER_URL_CHARS = 2048;

/**
 * The origin of a server URL when the rule allows it, else undefined.
 * @example
 * serverOrigin('http://127.0.0.1:11434/v1') // 'http://127.0.0.1:11434'
 * serverOrigin('http://192.168.1.5:11434/v1') // undefined: plain http off this machine
 */
export function serverOrigin(url: string): string | undefined {
  if (url.length > MAX_SERVER_URL_CHARS) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.username !== '' || parsed.password !== '') return undefined;
  if (parsed.protocol === 'https:') return parsed.origin;
  const loopback = parsed.hostname === '127.0.0.1' || parsed.hostname === 'localhost' || parsed.hostname === '[::1]';
  return parsed.protocol === 'http:' && loopback ? parsed.origin : undefined;
}
