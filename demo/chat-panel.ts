/**
 * The chat: the thread of the active user and agent, read back from engram's
 * conversation log, and a composer that runs one turn through
 * `new Assistant(engram, )`. Under each reply: what was recalled for it (with
 * scores), what the turn stored, and how long each step took.
 */
import { Assistant, retrievalProfile, type Engram, type Message } from '../lib/index.js';
import { errorText, type DemoContext } from './context.js';
import { byId, formatMs, formatTime, h, replace } from '../ui/dom.js';
import { labelOf, modelLabel, threadOf, toModel } from './settings.js';
import { SUGGESTIONS } from './suggestions.js';
import { detailsOf, loadTurn, saveTurn, type TurnDetails } from './turn-log.js';

/** Memories recalled per turn. */
export const RECALL_LIMIT = 3;

/**
 * The least relevance (search score, in [0, 1]) a recalled memory needs: the
 * library's default for the embedding model in use (its `minRelevance`,
 * measured in bench/eval), which the Assistant applies when given none.
 */
export async function recallThreshold(engram: Engram): Promise<number> {
  return retrievalProfile((await engram.ready()).embedderId).minRelevance;
}

const SYSTEM_PROMPT =
  'You are a helpful assistant with long-term memory. When the relevant memories answer the user, use them; keep replies short.';

/** The chat column. */
export class ChatPanel {
  readonly #ctx: DemoContext;
  readonly #list = byId('messages', 'ol');
  readonly #input = byId('chat-input', 'input');
  readonly #send = byId('send', 'button');
  readonly #suggestions = byId('suggestions');
  readonly #error = byId('error');
  #busy = false;

  constructor(ctx: DemoContext) {
    this.#ctx = ctx;
    byId('composer', 'form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.send(this.#input.value);
    });
  }

  /** Lets the user type (once the model is ready). */
  enable(): void {
    this.#input.disabled = false;
    this.#send.disabled = false;
    this.#input.focus();
  }

  /** Shows an error above the messages until the next turn. */
  showError(error: unknown): void {
    this.#error.textContent = errorText(error);
    this.#error.hidden = false;
  }

  /** Re-reads the thread of the active scope and renders it. */
  async render(): Promise<void> {
    const { engram, scope, model } = this.#ctx;
    byId('chat-title').textContent = `${labelOf(scope.agentId)} talking with ${labelOf(scope.userId)}`;
    const threshold = await recallThreshold(engram);
    byId('chat-subtitle').textContent =
      `thread ${threadOf(scope)} · answers: ${modelLabel(model)} · recall: top ${RECALL_LIMIT}, relevance ≥ ${threshold}`;
    const messages = await engram.conversation(threadOf(scope), scope).getMessages();
    const lastReply = [...messages].reverse().find((m) => m.role === 'assistant');
    replace(
      this.#list,
      ...(messages.length === 0 ? [emptyState()] : messages.map((m) => messageItem(m, m === lastReply, threshold))),
    );
    this.#renderSuggestions(messages);
    this.#scrollToEnd();
  }

  /** Runs one turn: the assistant stores, recalls, asks the model and stores again; the page shows what it did. */
  async send(text: string): Promise<void> {
    const content = text.trim();
    if (content === '' || this.#busy) return;
    this.#busy = true;
    this.#input.value = '';
    this.#input.disabled = true;
    this.#send.disabled = true;
    this.#error.hidden = true;
    const { engram, scope, model } = this.#ctx;
    this.#list.querySelector('.empty')?.remove();
    this.#list.append(
      h('li', { class: 'msg user pending' }, h('div', { class: 'bubble' }, content)),
      h(
        'li',
        { class: 'msg assistant pending' },
        h('div', { class: 'bubble typing' }, h('span'), h('span'), h('span')),
      ),
    );
    this.#scrollToEnd();
    try {
      const assistant = new Assistant(engram, {
        threadId: threadOf(scope),
        agentId: scope.agentId,
        userId: scope.userId,
        model: toModel(model),
        systemPrompt: SYSTEM_PROMPT,
        recallLimit: RECALL_LIMIT,
      });
      const report = await assistant.send(content);
      const [reply] = await engram.conversation(threadOf(scope), scope).getMessages({ role: 'assistant', limit: 1 });
      if (reply !== undefined) saveTurn(reply.id, detailsOf(report, modelLabel(model)));
    } catch (e) {
      this.showError(e);
    } finally {
      this.#busy = false;
      this.#input.disabled = false;
      this.#send.disabled = false;
      await this.#ctx.refresh();
      this.#input.focus();
    }
  }

  #renderSuggestions(messages: readonly Message[]): void {
    const said = new Set(messages.filter((m) => m.role === 'user').map((m) => m.content));
    const ideas = (SUGGESTIONS[this.#ctx.scope.userId] ?? []).map((s) => s.text).filter((s) => !said.has(s));
    replace(
      this.#suggestions,
      ideas.length === 0 ? null : h('span', { class: 'muted small' }, 'Try:'),
      ...ideas.map((idea) =>
        h('button', { class: 'chip', attrs: { type: 'button' }, on: { click: () => void this.send(idea) } }, idea),
      ),
    );
  }

  #scrollToEnd(): void {
    this.#list.scrollTop = this.#list.scrollHeight;
  }
}

function emptyState(): HTMLLIElement {
  return h(
    'li',
    { class: 'empty' },
    h('strong', {}, 'No messages in this thread yet.'),
    h(
      'span',
      {},
      'Tell the agent something about yourself, then ask about it. Each turn shows what engram stored, what it recalled and how long it took.',
    ),
  );
}

function messageItem(m: Message, latest: boolean, threshold: number): HTMLLIElement {
  if (m.role === 'system') {
    return h('li', { class: 'msg system' }, h('details', {}, h('summary', {}, 'system prompt'), h('p', {}, m.content)));
  }
  const who = m.role === 'user' ? labelOf(m.userId ?? 'user') : labelOf(m.agentId ?? 'assistant');
  const details = m.role === 'assistant' ? loadTurn(m.id) : undefined;
  return h(
    'li',
    {
      class: `msg ${m.role}`,
      attrs: m.role === 'assistant' ? { 'data-testid': 'turn', 'data-id': m.id } : { 'data-id': m.id },
    },
    h('div', { class: 'bubble' }, m.content),
    h(
      'div',
      { class: 'meta' },
      `${who} · ${formatTime(m.createdAt)}${details === undefined ? '' : ` · ${details.model}`}`,
    ),
    m.role === 'assistant' ? turnCard(details, latest, threshold) : null,
  );
}

function turnCard(details: TurnDetails | undefined, open: boolean, threshold: number): HTMLElement {
  if (details === undefined)
    return h('div', { class: 'turn missing muted small' }, 'No turn report was recorded for this reply.');
  const { recalled, stored, timings } = details;
  const added = stored.filter((s) => s.event === 'ADD').length;
  return h(
    'details',
    { class: 'turn', attrs: { open } },
    h(
      'summary',
      {},
      h('span', { class: 'pill recall' }, `recalled ${recalled.length}`),
      h(
        'span',
        { class: 'pill store' },
        `stored ${added}${stored.length > added ? ` (+${stored.length - added} known)` : ''}`,
      ),
      h('span', { class: 'pill time' }, formatMs(timings.totalMs)),
    ),
    h(
      'div',
      { class: 'turn-body' },
      timeline(timings),
      h(
        'div',
        { class: 'turn-cols' },
        h(
          'section',
          { attrs: { 'data-testid': 'recalled' } },
          h('h4', {}, 'Recalled for this reply'),
          recalled.length === 0
            ? h('p', { class: 'muted small' }, `Nothing with relevance ≥ ${threshold}.`)
            : h(
                'ul',
                {},
                ...recalled.map((r) =>
                  h(
                    'li',
                    {},
                    h(
                      'span',
                      {
                        class: 'score',
                        attrs: {
                          title: `relevance ${r.score.toFixed(3)}${r.similarity === undefined ? '' : ` · cosine ${r.similarity.toFixed(3)}`}`,
                        },
                      },
                      r.score.toFixed(2),
                    ),
                    h('span', { class: 'text' }, r.memory),
                  ),
                ),
              ),
        ),
        h(
          'section',
          { attrs: { 'data-testid': 'stored' } },
          h('h4', {}, 'Stored this turn'),
          stored.length === 0
            ? h('p', { class: 'muted small' }, 'Nothing.')
            : h(
                'ul',
                {},
                ...stored.map((s) =>
                  h(
                    'li',
                    {},
                    h('span', { class: `badge ${s.event.toLowerCase()}` }, s.event === 'NONE' ? 'KNOWN' : s.event),
                    h('span', { class: 'text' }, s.memory),
                  ),
                ),
              ),
        ),
      ),
    ),
  );
}

function timeline(t: TurnDetails['timings']): HTMLElement {
  const other = Math.max(0, t.totalMs - t.recallMs - t.modelMs - t.storeMs);
  const steps = [
    { key: 'recall', label: 'recall', ms: t.recallMs },
    { key: 'model', label: 'model', ms: t.modelMs },
    { key: 'store', label: 'store', ms: t.storeMs },
    { key: 'other', label: 'log + context', ms: other },
  ];
  const total = Math.max(t.totalMs, 0.001);
  return h(
    'div',
    { class: 'timings', attrs: { 'data-testid': 'timings' } },
    h(
      'div',
      { class: 'stack' },
      ...steps.map((s) => {
        const seg = h('span', { class: `seg ${s.key}`, attrs: { title: `${s.label}: ${formatMs(s.ms)}` } });
        seg.style.flexGrow = String(Math.max(s.ms / total, 0.02));
        return seg;
      }),
    ),
    h(
      'div',
      { class: 'legend' },
      ...steps.map((s) =>
        h(
          'span',
          { class: `step ${s.key}`, attrs: { 'data-step': s.key } },
          h('i'),
          `${s.label} `,
          h('b', {}, formatMs(s.ms)),
        ),
      ),
      h('span', { class: 'step total', attrs: { 'data-step': 'total' } }, 'total ', h('b', {}, formatMs(t.totalMs))),
    ),
  );
}
