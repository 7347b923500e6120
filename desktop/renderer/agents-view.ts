/**
 * The Agents view: the app's MCP server for local agents. Whether it listens
 * and where (the web fallback has no main process, so no server: the view says
 * so); a form that connects a client (name, agent id, user id) and shows its
 * token once with the configuration to paste; and each connected client with
 * its last calls, what it stored, revoke (the token stops working) and
 * "forget what it wrote" (engram.forget in its scope: the text leaves every table).
 * Tokens and calls live in the main process (bridge); what a client stored is
 * read from this page's engram.
 */
import type { ForgetResult, MemoryItem } from '../../lib/index.js';
import { formatTime, h, replace } from '../../ui/dom.js';
import type { HubClientInfo, HubNewClient, HubScope, HubStatus } from '../preload/bridge-api.js';
import { unwrap, type AppContext, type View } from './app-context.js';
import { hubConfigSnippets } from './hub-config.js';
import { forgetHubClient } from './hub-answer.js';

/** How many of a client's memories the view lists (the newest). */
const STORED_SHOWN = 3;

/** A scope as people read it. */
export function scopeLabel(scope: HubScope): string {
  return `agent ${scope.agentId}${scope.userId === undefined ? ' · any user' : ` · user ${scope.userId}`}`;
}

/** What forgetting a client removed, as one line. */
export function forgetClientSummary(name: string, r: ForgetResult): string {
  return `Forgot what ${name} wrote: ${r.memories} memories, ${r.messages} messages, ${r.blocks} core memory blocks, ${r.traces} traces, ${r.history} history entries, ${r.vectors} vectors.`;
}

function hubStatusText(status: HubStatus): string {
  if (status.state === 'listening')
    return `Listening on ${status.url} (port ${status.port}, this machine only). Each client below has its own token and scope.`;
  if (status.state === 'failed') return `Not listening on port ${status.port}: ${status.reason}.`;
  return `No MCP server: ${status.reason}.`;
}

/** A button that copies `text` and says so. */
function copyButton(text: () => string, testid: string): HTMLButtonElement {
  const button = h('button', { attrs: { type: 'button', 'data-testid': testid } }, 'Copy');
  button.addEventListener('click', () => {
    void navigator.clipboard.writeText(text()).then(
      () => {
        button.textContent = 'Copied';
        setTimeout(() => {
          button.textContent = 'Copy';
        }, 1500);
      },
      () => {
        button.textContent = 'Select and copy by hand';
      },
    );
  });
  return button;
}

/** The Agents view. */
export class AgentsView implements View {
  readonly name = 'agents';
  readonly root: HTMLElement;
  readonly #ctx: AppContext;
  readonly #status = h('p', { attrs: { 'data-testid': 'hub-status', 'data-state': 'unknown' } });
  readonly #agentName = h('input', {
    attrs: {
      placeholder: 'name, e.g. Claude Desktop',
      required: true,
      'data-testid': 'hub-name',
      'aria-label': 'Name',
    },
  });
  readonly #agentId = h('input', {
    attrs: {
      placeholder: 'agent id, e.g. claude',
      required: true,
      'data-testid': 'hub-agent',
      'aria-label': 'Agent id',
    },
  });
  readonly #userId = h('input', {
    attrs: { placeholder: 'user id (optional)', 'data-testid': 'hub-user', 'aria-label': 'User id' },
  });
  readonly #create = h(
    'button',
    { class: 'primary', attrs: { type: 'submit', 'data-testid': 'hub-create' } },
    'Create token',
  );
  readonly #form: HTMLFormElement;
  readonly #created = h('div', { class: 'stack', attrs: { 'data-testid': 'hub-created', hidden: true } });
  readonly #clientsHeading = h('h2', {}, 'Connected clients');
  readonly #clients = h('div', { class: 'stack', attrs: { 'data-testid': 'hub-clients' } });
  #hubStatus: HubStatus | undefined;
  #refreshTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.#form = h(
      'form',
      { class: 'card stack', attrs: { 'data-testid': 'hub-form' } },
      h('h2', {}, 'Connect an agent'),
      h(
        'p',
        { class: 'muted small' },
        'Every call with its token reads and writes only in this scope: what it saves carries this agent id (and user id), whatever the agent asks for.',
      ),
      h('div', { class: 'row' }, this.#agentName, this.#agentId, this.#userId, this.#create),
    );
    this.#form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#createClient();
    });
    this.root = h(
      'section',
      { class: 'view agents-view', attrs: { 'data-view': 'agents', 'data-state': 'idle' } },
      h(
        'header',
        { class: 'view-head' },
        h('h1', {}, 'Agents'),
        h(
          'button',
          { attrs: { type: 'button', 'data-testid': 'hub-refresh' }, on: { click: () => void this.show() } },
          'Refresh',
        ),
      ),
      h('div', { class: 'card hub-status' }, this.#status),
      this.#form,
      this.#created,
      this.#clientsHeading,
      this.#clients,
    );
  }

  async show(): Promise<void> {
    this.root.dataset['state'] = 'loading';
    const { bridge } = this.#ctx;
    const [status, clients] = await Promise.all([unwrap(bridge.hubStatus()), unwrap(bridge.hubClients())]);
    this.#hubStatus = status;
    this.#status.textContent = hubStatusText(status);
    this.#status.dataset['state'] = status.state;
    this.#status.className = status.state === 'listening' ? 'ok' : 'warn';
    // The web fallback serves no agents: nothing to connect, nobody connected.
    const off = status.state === 'off';
    this.#form.hidden = off;
    this.#clientsHeading.hidden = off;
    this.#clients.hidden = off;
    const cards = await Promise.all(clients.map((c) => this.#clientCard(c, clients)));
    replace(
      this.#clients,
      ...(cards.length === 0
        ? [
            h(
              'p',
              { class: 'muted card', attrs: { 'data-testid': 'hub-no-clients' } },
              'No agent connected yet. Create a token above and paste the configuration into the agent.',
            ),
          ]
        : cards),
    );
    this.root.dataset['state'] = 'ready';
  }

  /** Called after the app answered an agent's call: re-reads the view shortly, when it is shown. */
  callAnswered(): void {
    if (this.root.hidden) return;
    clearTimeout(this.#refreshTimer);
    // The main process records the call when the answer reaches it, just after this page sent it.
    this.#refreshTimer = setTimeout(() => {
      this.show().catch((e: unknown) => {
        this.#ctx.showError(e);
      });
    }, 300);
  }

  async #createClient(): Promise<void> {
    const name = this.#agentName.value.trim();
    const agentId = this.#agentId.value.trim();
    const userId = this.#userId.value.trim();
    if (name === '' || agentId === '') return;
    this.#create.disabled = true;
    try {
      const created = await unwrap(
        this.#ctx.bridge.createHubClient(name, userId === '' ? { agentId } : { agentId, userId }),
      );
      this.#agentName.value = '';
      this.#agentId.value = '';
      this.#userId.value = '';
      this.#showCreated(created);
      await this.show();
    } catch (e) {
      this.#ctx.showError(e);
    } finally {
      this.#create.disabled = false;
    }
  }

  /** The new token, once, with the snippets that carry it. */
  #showCreated(created: HubNewClient): void {
    const status = this.#hubStatus;
    const url = created.url ?? (status?.state === 'listening' ? status.url : undefined);
    const done = h('button', { attrs: { type: 'button', 'data-testid': 'hub-created-done' } }, 'Done, I saved it');
    done.addEventListener('click', () => {
      // The token leaves the page: nothing keeps it after this.
      replace(this.#created);
      this.#created.hidden = true;
    });
    const snippets =
      url === undefined
        ? [
            h(
              'p',
              { class: 'warn' },
              'The server is not listening, so there is no address to give the agent yet; the token works once it listens.',
            ),
          ]
        : hubConfigSnippets({
            token: created.token,
            url,
            ...(status?.state === 'listening' && status.bridgeScript !== undefined
              ? { bridgeScript: status.bridgeScript }
              : {}),
          }).map((s) =>
            h(
              'div',
              { class: 'snippet', attrs: { 'data-snippet': s.id } },
              h(
                'div',
                { class: 'row spread' },
                h('span', {}, h('strong', {}, s.title), h('span', { class: 'muted small' }, ` · ${s.where}`)),
                copyButton(() => s.text, `hub-copy-${s.id}`),
              ),
              h('pre', { class: 'mono' }, s.text),
            ),
          );
    replace(
      this.#created,
      h(
        'div',
        { class: 'card stack token-card' },
        h('h2', {}, `Token for ${created.client.name}`),
        h(
          'p',
          { class: 'warn small' },
          'Copy it now: engram keeps only a hash of it and cannot show it again. Anyone with it can read and write this scope.',
        ),
        h(
          'div',
          { class: 'row' },
          h('code', { class: 'mono token', attrs: { 'data-testid': 'hub-token' } }, created.token),
          copyButton(() => created.token, 'hub-copy-token'),
        ),
        ...snippets,
        h('div', { class: 'row' }, done),
      ),
    );
    this.#created.hidden = false;
  }

  async #clientCard(client: HubClientInfo, all: readonly HubClientInfo[]): Promise<HTMLElement> {
    // Clients are told apart by scope: two with one scope see, and forget, the same memories.
    const sharing = all.filter(
      (c) => c.id !== client.id && c.scope.agentId === client.scope.agentId && c.scope.userId === client.scope.userId,
    );
    const { engram } = this.#ctx;
    const stored = await engram.getAll({
      agentId: client.scope.agentId,
      ...(client.scope.userId === undefined ? {} : { userId: client.scope.userId }),
      limit: STORED_SHOWN,
    });
    const revoke = h('button', { attrs: { type: 'button', 'data-testid': 'hub-revoke' } }, 'Revoke token');
    revoke.addEventListener('click', () => {
      if (!window.confirm(`Revoke the token of ${client.name}? Its next call is refused; what it stored stays.`))
        return;
      revoke.disabled = true;
      unwrap(this.#ctx.bridge.revokeHubClient(client.id))
        .then(() => this.show())
        .catch((e: unknown) => {
          revoke.disabled = false;
          this.#ctx.showError(e);
        });
    });
    const forget = h(
      'button',
      { class: 'danger', attrs: { type: 'button', 'data-testid': 'hub-forget' } },
      'Forget what it wrote…',
    );
    forget.addEventListener('click', () => {
      void this.#forget(client, stored.total, forget);
    });
    return h(
      'article',
      {
        class: 'card stack hub-client',
        attrs: { 'data-client': client.id, 'data-name': client.name, 'data-testid': 'hub-client' },
      },
      h(
        'div',
        { class: 'row spread' },
        h(
          'span',
          {},
          h('strong', {}, client.name),
          h(
            'span',
            { class: 'muted small' },
            ` · ${scopeLabel(client.scope)} · added ${formatTime(Date.parse(client.createdAt))}`,
          ),
        ),
        h('span', { class: 'row' }, revoke, forget),
      ),
      h(
        'div',
        { class: 'hub-columns' },
        h(
          'div',
          {},
          h('h3', {}, 'Last calls'),
          client.lastCalls.length === 0
            ? h('p', { class: 'muted small' }, 'No call since the app started.')
            : h(
                'table',
                { class: 'calls small', attrs: { 'data-testid': 'hub-calls' } },
                h('thead', {}, h('tr', {}, h('th', {}, 'time'), h('th', {}, 'tool'), h('th', {}, 'outcome'))),
                h(
                  'tbody',
                  {},
                  ...client.lastCalls.map((c) =>
                    h(
                      'tr',
                      { class: c.ok ? 'ok' : 'failed' },
                      h('td', {}, new Date(c.at).toLocaleTimeString()),
                      h('td', { class: 'mono' }, c.what),
                      h('td', {}, c.ok ? 'ok' : 'failed'),
                    ),
                  ),
                ),
              ),
        ),
        h(
          'div',
          {},
          h(
            'h3',
            { attrs: { 'data-testid': 'hub-stored-count' } },
            `Stored: ${stored.total} ${stored.total === 1 ? 'memory' : 'memories'}`,
          ),
          sharing.length === 0
            ? null
            : h(
                'p',
                { class: 'muted small', attrs: { 'data-testid': 'hub-shared' } },
                `Shares this scope with ${sharing.map((c) => c.name).join(', ')}: they see and forget the same memories.`,
              ),
          stored.total === 0
            ? h('p', { class: 'muted small' }, 'Nothing in this scope.')
            : h(
                'ul',
                { class: 'stored small', attrs: { 'data-testid': 'hub-stored' } },
                ...stored.results.map((m: MemoryItem) =>
                  h(
                    'li',
                    {},
                    h(
                      'a',
                      {
                        attrs: { href: '#memories' },
                        on: {
                          click: (event) => {
                            event.preventDefault();
                            this.#ctx.openMemory(m.id);
                          },
                        },
                      },
                      m.memory,
                    ),
                  ),
                ),
              ),
        ),
      ),
    );
  }

  async #forget(client: HubClientInfo, count: number, button: HTMLButtonElement): Promise<void> {
    if (
      !window.confirm(
        `Forget everything ${client.name} wrote (${scopeLabel(client.scope)})?\n\n${count} memories, with their history, and the messages, core memory and traces of this scope leave this device. Anything else in this scope goes too. This cannot be undone.`,
      )
    )
      return;
    button.disabled = true;
    try {
      const removed = await forgetHubClient(this.#ctx.engram, client.scope);
      this.#ctx.changed();
      await this.show();
      this.#ctx.notify(forgetClientSummary(client.name, removed));
    } catch (e) {
      button.disabled = false;
      this.#ctx.showError(e);
    }
  }
}
