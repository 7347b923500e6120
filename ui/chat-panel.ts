/**
 * The chat that shows memory at work, shared by the demo page and the desktop
 * app: the thread of one user and agent, read back from engram's conversation
 * log, and a composer that runs one turn through `Assistant`. The reply streams
 * into its bubble as the model sends it; under each reply, what was recalled for
 * it (with scores), what the turn stored, and how long each step took. A turn
 * that fails stores nothing (the Assistant stores a turn once the model
 * answered): the error says why, the text goes back into the composer, and
 * "Try again" sends it again. The host says which engram, thread and model.
 */
import { Assistant, retrievalProfile, type Engram, type LlmOption, type Message } from '../lib/index.js';
import { formatTime, h, replace } from './dom.js';
import { errorText } from './error-text.js';
import type { StoreGate } from './store-gate.js';
import { turnCard } from './turn-card.js';
import { turnDetailsOf, type ModelLabels } from './turn-record.js';

/** A chat turn, as the app's store gate names it to a conversion or an import that waits for it. */
export const CHAT_TURN = 'a chat turn';

/** Memories recalled per turn. */
export const RECALL_LIMIT = 3;

/** The system prompt of every chat thread. */
export const SYSTEM_PROMPT =
  'You are a helpful assistant with long-term memory. When the relevant memories answer the user, use them; keep replies short.';

/**
 * The least relevance (search score, in [0, 1]) a recalled memory needs: the
 * library's default for the embedding model in use (its `minRelevance`,
 * measured in bench/eval), which the Assistant applies when given none.
 */
export async function recallThreshold(engram: Engram): Promise<number> {
  return retrievalProfile((await engram.ready()).embedderId).minRelevance;
}

/** Who talks in a thread. */
export interface ChatScope {
  userId: string;
  agentId: string;
}

/** The model a turn uses, as the host chose it. */
export interface ChatModelChoice {
  model: LlmOption;
  /** Shown beside each reply, e.g. "scripted agent (offline)". */
  label: string;
}

/** What the chat asks of the page that holds it. */
export interface ChatHost {
  /** The open store (the desktop replaces it after an import). */
  engram(): Engram;
  scope(): ChatScope;
  /** The conversation thread of a user and agent. */
  threadOf(scope: ChatScope): string;
  /** The model for the next turn (the desktop checks that its server answers, else the scripted agent). */
  model(): Promise<ChatModelChoice>;
  /** The name of a user or agent id. */
  labelOf(id: string): string;
  /** Where the model of each reply is remembered. */
  labels: ModelLabels;
  /** Chips offered under the thread (statements and questions to try). */
  suggestions?(scope: ChatScope): readonly string[];
  /** Opens a memory of a turn's report; without it they are plain text. */
  openMemory?(id: string): void;
  /** After a turn (stored or failed): the host re-reads what it shows, this chat included. */
  afterTurn(): Promise<void>;
  /**
   * The app's store gate (ui/store-gate.ts): a turn (and the re-read after it) runs through it as
   * {@link CHAT_TURN}, so it waits, its text on screen, while a conversion or an import has closed the
   * store (the Stop button ends the wait), and a closing waits until the turn streaming is stored.
   * Without it the turn runs at once.
   */
  readonly gate?: StoreGate;
}

/** The chat column: error, messages, chips and composer. */
export class ChatPanel {
  /** Mount this where the chat goes. */
  readonly root: HTMLElement;
  readonly #host: ChatHost;
  readonly #error = h('div', { class: 'error', attrs: { role: 'alert', 'data-testid': 'chat-error' } });
  readonly #list = h('ol', { class: 'messages', attrs: { 'data-testid': 'messages', 'aria-live': 'polite' } });
  readonly #suggestions = h('div', { class: 'suggestions' });
  readonly #input = h('input', {
    attrs: {
      type: 'text',
      'data-testid': 'chat-input',
      'aria-label': 'Message',
      placeholder: 'Tell me something about yourself, or ask what I remember…',
      autocomplete: 'off',
      disabled: true,
    },
  });
  readonly #send = h('button', {
    class: 'primary',
    attrs: { type: 'submit', 'data-testid': 'send', disabled: true },
  });
  readonly #stop = h('button', { attrs: { type: 'button', 'data-testid': 'stop', hidden: true } }, 'Stop');
  #busy: AbortController | undefined;

  constructor(host: ChatHost) {
    this.#host = host;
    this.#send.textContent = 'Send';
    this.#error.hidden = true;
    this.#stop.addEventListener('click', () => {
      this.#busy?.abort();
    });
    const composer = h(
      'form',
      {
        class: 'composer',
        on: {
          submit: (event) => {
            event.preventDefault();
            void this.send(this.#input.value);
          },
        },
      },
      this.#input,
      this.#send,
      this.#stop,
    );
    this.root = h('div', { class: 'chat-panel' }, this.#error, this.#list, this.#suggestions, composer);
  }

  /** Lets the user type (once the store is open). */
  enable(): void {
    this.#input.disabled = false;
    this.#send.disabled = false;
    this.#input.focus();
  }

  /** Shows an error above the messages until the next turn; with `retry`, a button that sends that text again. */
  showError(error: unknown, retry?: string): void {
    replace(
      this.#error,
      h('span', {}, errorText(error)),
      retry === undefined
        ? null
        : h(
            'button',
            {
              class: 'small',
              attrs: { type: 'button', 'data-testid': 'retry' },
              on: { click: () => void this.send(retry) },
            },
            'Try again',
          ),
    );
    this.#error.hidden = false;
  }

  /** Re-reads the thread of the active scope and renders it. */
  async render(): Promise<void> {
    const engram = this.#host.engram();
    const scope = this.#host.scope();
    const threshold = await recallThreshold(engram);
    const messages = await engram.conversation(this.#host.threadOf(scope), scope).getMessages();
    const lastReply = [...messages].reverse().find((m) => m.role === 'assistant');
    this.#list.dataset['thread'] = this.#host.threadOf(scope);
    replace(
      this.#list,
      ...(messages.length === 0 ? [emptyState()] : messages.map((m) => this.#item(m, m === lastReply, threshold))),
    );
    this.#renderSuggestions(messages);
    this.#scrollToEnd();
  }

  /**
   * Runs one turn: recall, the model (streamed), then the turn is stored; the page shows what it did.
   * While the host's store is closed (its gate) the turn waits, its text on screen, and is sent once the
   * store is open again; a turn that fails, or whose wait is stopped, puts its text back in the composer.
   */
  async send(text: string): Promise<void> {
    const content = text.trim();
    if (content === '' || this.#busy !== undefined) return;
    const abort = new AbortController();
    this.#busy = abort;
    this.#setBusy(true);
    this.#input.value = '';
    this.#error.hidden = true;
    const host = this.#host;
    this.#list.querySelector('.empty')?.remove();
    const dots = (): HTMLElement[] => [h('span'), h('span'), h('span')];
    const bubble = h('div', { class: 'bubble typing' }, ...dots());
    const pending = [
      h('li', { class: 'msg user pending' }, h('div', { class: 'bubble' }, content)),
      h('li', { class: 'msg assistant pending', attrs: { 'data-testid': 'streaming' } }, bubble),
    ];
    this.#list.append(...pending);
    this.#scrollToEnd();
    /** Whether the turn began (its wait for the store over), and whether it failed: set by the closures below. */
    const turnState = { started: false, failed: false };
    /** Nothing of the turn was stored: the text goes back where it was typed, to send again. */
    const giveBack = (e: unknown): void => {
      turnState.failed = true;
      for (const item of pending) item.remove();
      this.#input.value = content;
      this.showError(e, content);
      this.#busy = undefined;
      this.#setBusy(false);
    };
    const turn = async (): Promise<void> => {
      turnState.started = true;
      if (bubble.dataset['waiting'] !== undefined) {
        delete bubble.dataset['waiting'];
        bubble.classList.add('typing');
        replace(bubble, ...dots());
      }
      try {
        await this.#turn(content, bubble, abort.signal);
        this.#busy = undefined;
        this.#setBusy(false);
      } catch (e) {
        giveBack(e);
      }
      await host.afterTurn();
    };
    try {
      if (host.gate === undefined) await turn();
      else
        await host.gate.use(CHAT_TURN, turn, {
          signal: abort.signal,
          onWait: (what) => {
            bubble.dataset['waiting'] = what;
            bubble.classList.remove('typing');
            replace(bubble, `Waiting: the store is closed for ${what}; your message is sent once it reopens…`);
          },
        });
    } catch (e) {
      // Stopped while it waited for the store (the turn never ran), or the re-read after the turn failed.
      if (turnState.started) this.showError(e);
      else giveBack(e);
    } finally {
      if (turnState.failed) this.#error.hidden = false;
      this.#input.focus();
    }
  }

  /** The turn itself, on the host's engram of now: recall, the model streamed into `bubble`, the turn stored. */
  async #turn(content: string, bubble: HTMLElement, signal: AbortSignal): Promise<void> {
    const host = this.#host;
    const engram = host.engram();
    const scope = host.scope();
    const threadId = host.threadOf(scope);
    let streamed = '';
    const { model, label } = await host.model();
    const assistant = new Assistant(engram, {
      threadId,
      agentId: scope.agentId,
      userId: scope.userId,
      model,
      systemPrompt: SYSTEM_PROMPT,
      recallLimit: RECALL_LIMIT,
    });
    await assistant.send(content, {
      signal,
      onDelta: (piece) => {
        if (streamed === '') replace(bubble);
        bubble.classList.remove('typing');
        streamed += piece;
        bubble.textContent = streamed;
        this.#scrollToEnd();
      },
    });
    const [reply] = await engram.conversation(threadId, scope).getMessages({ role: 'assistant', limit: 1 });
    if (reply !== undefined) host.labels.save(reply.id, label);
  }

  #setBusy(busy: boolean): void {
    this.#input.disabled = busy;
    this.#send.disabled = busy;
    this.#stop.hidden = !busy;
    this.root.dataset['busy'] = String(busy);
  }

  #item(m: Message, latest: boolean, threshold: number): HTMLLIElement {
    if (m.role === 'system') {
      return h(
        'li',
        { class: 'msg system' },
        h('details', {}, h('summary', {}, 'system prompt'), h('p', {}, m.content)),
      );
    }
    const host = this.#host;
    const who = m.role === 'user' ? host.labelOf(m.userId ?? 'user') : host.labelOf(m.agentId ?? 'assistant');
    const model = m.role === 'assistant' ? host.labels.of(m.id) : undefined;
    return h(
      'li',
      {
        class: `msg ${m.role}`,
        attrs: m.role === 'assistant' ? { 'data-testid': 'turn', 'data-id': m.id } : { 'data-id': m.id },
      },
      h('div', { class: 'bubble' }, m.content),
      h('div', { class: 'meta' }, `${who} · ${formatTime(m.createdAt)}${model === undefined ? '' : ` · ${model}`}`),
      m.role === 'assistant'
        ? turnCard(turnDetailsOf(m), {
            open: latest,
            threshold,
            ...(host.openMemory === undefined ? {} : { onOpenMemory: (id: string) => host.openMemory?.(id) }),
          })
        : null,
    );
  }

  #renderSuggestions(messages: readonly Message[]): void {
    const said = new Set(messages.filter((m) => m.role === 'user').map((m) => m.content));
    const ideas = (this.#host.suggestions?.(this.#host.scope()) ?? []).filter((s) => !said.has(s));
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
