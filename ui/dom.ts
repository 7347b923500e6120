/**
 * A tiny DOM builder shared by the demo page and the desktop renderer: `h('li', { class: 'memory' }, text)`.
 * Text is always set as text, never parsed as HTML, so memories and replies
 * cannot inject markup.
 */

/** What h() accepts as a child. */
export type Child = Node | string | number | null | undefined | false;

/** Attributes (strings; `true` = present, false/undefined = absent) and event listeners. */
export interface Props {
  class?: string;
  attrs?: Record<string, string | boolean | undefined>;
  on?: { [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void };
}

/** Creates an element with props and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class !== undefined) el.className = props.class;
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (value === true) el.setAttribute(name, '');
    else if (typeof value === 'string') el.setAttribute(name, value);
  }
  for (const [type, listener] of Object.entries(props.on ?? {})) {
    el.addEventListener(type, listener as EventListener);
  }
  append(el, children);
  return el;
}

/** Appends children, skipping empty ones. */
export function append(el: Element, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'number' ? String(child) : child);
  }
}

/** Replaces an element's children. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** The element with this id (of this tag, when given); throws when the page lacks it (a bug in index.html). */
export function byId(id: string): HTMLElement;
export function byId<K extends keyof HTMLElementTagNameMap>(id: string, tag: K): HTMLElementTagNameMap[K];
export function byId(id: string, tag?: string): HTMLElement {
  const el = document.getElementById(id);
  if (el === null) throw new TypeError(`#${id} is missing from the page's index.html`);
  if (tag !== undefined && el.tagName.toLowerCase() !== tag)
    throw new TypeError(`#${id} is a <${el.tagName.toLowerCase()}>, not a <${tag}>`);
  return el;
}

/** Milliseconds for people: "0.4 ms", "12 ms", "1.2 s". */
export function formatMs(ms: number): string {
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A time of day, or a date for older times. */
export function formatTime(at: number): string {
  const d = new Date(at);
  const today = new Date();
  return d.toDateString() === today.toDateString()
    ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : d.toLocaleDateString([], { month: 'short', day: 'numeric' });
}
