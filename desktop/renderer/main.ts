/**
 * The desktop renderer's entry: picks the bridge (the preload's, or the web
 * fallback in a plain browser), opens engram on IndexedDB with the embedding
 * model of the store (ui/model-picking.ts: the best model served unless the store
 * was made with another that is still here) in a Web Worker, and wires the views,
 * the navigation and the menu.
 */
import { Engram, TransformersEmbedder, type KnownEmbeddingModel, type ModelLoadProgress } from '../../lib/index.js';
import { byId, h, replace } from '../../ui/dom.js';
import { transformersEmbedderFor } from '../../ui/reembed-store.js';
import {
  BRIDGE_GLOBAL,
  type BridgeResult,
  type DesktopBridge,
  type HubAnswer,
  type HubCall,
  type MenuCommand,
} from '../preload/bridge-api.js';
import { VIEWS, errorText, type AppContext, type View, type ViewName } from './app-context.js';
import { BlocksView } from './blocks-view.js';
import { ChatView } from './chat-view.js';
import { ConversationsView } from './conversations-view.js';
import { ForgetView } from './forget-view.js';
import { MapView } from './map-view.js';
import { MemoriesView } from './memories-view.js';
import { StatusView } from './status-view.js';
import { SyncView } from './sync-view.js';
import { TransferView, type OpenOptions } from './transfer-view.js';
import { createWebBridge } from './web-bridge.js';
import { answerHubCall } from './hub-answer.js';
import { AgentsView } from './agents-view.js';
import { ModelSection } from './model-section.js';
import { unlockStore } from './store-unlock.js';
import { StoreKeySection } from './store-key-section.js';
import { StoreGate } from '../../ui/store-gate.js';
import { StoreWork } from '../../ui/store-work.js';

/** The IndexedDB database of the desktop app. */
const DB_NAME = 'engram-desktop';
/** localStorage key of the embedding model picked in the status view. */
const MODEL_CHOICE_KEY = 'engram-desktop:embedding-model';
/** An agent's MCP call, as the store gate names it to a conversion or an import that waits for it. */
const AGENT_CALL = 'an agent’s call';

const LABELS: Readonly<Record<ViewName, string>> = {
  chat: 'Chat',
  memories: 'Memories',
  conversations: 'Conversations',
  blocks: 'Core memory',
  map: 'Map',
  transfer: 'Import / export',
  sync: 'Sync',
  agents: 'Agents',
  forget: 'Forget a user',
  status: 'Status',
};

function bridgeOf(): DesktopBridge {
  const exposed = (window as unknown as Record<string, DesktopBridge | undefined>)[BRIDGE_GLOBAL];
  return exposed ?? createWebBridge();
}

function isView(name: string): name is ViewName {
  return (VIEWS as readonly string[]).includes(name);
}

function modelProgress(loading: HTMLElement, model: KnownEmbeddingModel, p: ModelLoadProgress): void {
  const file = p.file === undefined ? '' : ` ${p.file}`;
  loading.textContent =
    p.progress === undefined
      ? `Loading the ${model.label}… ${p.status}${file}`
      : `Loading the ${model.label}… ${p.status}${file} ${Math.round(p.progress)}%`;
}

async function main(): Promise<void> {
  const loading = byId('loading');
  const banner = byId('banner');
  const bridge = bridgeOf();
  // Local agents' MCP calls (desktop) are taken from the start: one that comes while the store is locked (the
  // passphrase not typed yet) waits for it, within the main process's timeout, instead of going unheard.
  let opened!: (answer: (call: HubCall) => Promise<BridgeResult<HubAnswer>>) => void;
  const answerer = new Promise<(call: HubCall) => Promise<BridgeResult<HubAnswer>>>((resolve) => {
    opened = resolve;
  });
  bridge.onHubCall(async (call) => (await answerer)(call));
  // The store's key first (the OS keychain, or a passphrase the user types): every opening below passes it.
  loading.textContent = 'Unlocking the memory store…';
  const { plan, encryption, protection, notice } = await unlockStore({
    bridge,
    dbName: DB_NAME,
    choiceKey: MODEL_CHOICE_KEY,
    host: byId('unlock'),
    asking: (asking) => {
      loading.hidden = asking;
    },
  });
  loading.textContent = 'Opening the memory store…';
  const embedderOf = (model: KnownEmbeddingModel): (() => Promise<TransformersEmbedder>) => {
    return () =>
      TransformersEmbedder.create({
        model: model.id,
        onProgress: (p) => {
          modelProgress(loading, model, p);
        },
      });
  };
  // One object: the import view reopens with it, and a re-embed points it at the new model; the same key throughout.
  const openOptions: OpenOptions = {
    ...(encryption === undefined ? {} : { encryption }),
    embedder: embedderOf(plan.open),
    onProgress: (p) => {
      // A rebuild: no usable snapshot (e.g. a store converted at unlock that had none, store-unlock.ts).
      loading.textContent =
        p.phase === 'reembed'
          ? `Re-embedding memories with the ${plan.open.label} (the store's model is not here)… ${p.done} / ${p.total}`
          : p.phase === 'rebuild'
            ? `Rebuilding the search index… ${p.done} / ${p.total}`
            : `Loading the vector index… ${p.done} / ${p.total}`;
    },
  };
  const engram = await Engram.open({ ...openOptions, name: DB_NAME, ...(plan.reembedAtOpen ? { reembed: true } : {}) });
  await engram.ready();

  const views = new Map<ViewName, View>();
  let current: ViewName = 'chat';
  // While the Status view converts the store in place (store-key-section.ts) it is closed: the views stay where
  // they are (navigation is paused, body[data-store="closed"]); agents' calls, chat turns and exports wait for it
  // to reopen through the store gate, which also holds the close until the ones running have ended.
  // Told whether the store is open: what waited for a reopen that failed is refused, said, instead of meeting a closed engram.
  const gate = new StoreGate(() => !ctx.engram.closed);
  // A re-embed, a conversion of the store's encryption and an import: one at a time, the others' starts disabled with why meanwhile.
  const storeWork = new StoreWork();
  const paused = (): boolean => document.body.dataset['store'] === 'closed';
  const show = async (name: ViewName): Promise<void> => {
    if (paused()) return;
    current = name;
    for (const [n, v] of views) v.root.hidden = n !== name;
    for (const link of document.querySelectorAll<HTMLAnchorElement>('nav a[data-view]'))
      link.classList.toggle('active', link.dataset['view'] === name);
    document.body.dataset['current'] = name;
    try {
      await views.get(name)?.show();
    } catch (e) {
      ctx.showError(e);
    }
  };
  const dismiss = (): HTMLButtonElement =>
    h(
      'button',
      {
        class: 'icon',
        attrs: { type: 'button', 'aria-label': 'Dismiss', 'data-testid': 'banner-dismiss' },
        on: {
          click: () => {
            banner.hidden = true;
          },
        },
      },
      '×',
    );
  const ctx: AppContext = {
    engram,
    bridge,
    dbName: DB_NAME,
    protection,
    gate,
    navigate: (name) => {
      if (location.hash !== `#${name}`) location.hash = name;
      else void show(name);
    },
    openMemory: (id) => {
      ctx.navigate('memories');
      void memories.open(id).catch((e: unknown) => {
        ctx.showError(e);
      });
    },
    showError: (e) => {
      console.warn(e);
      replace(banner, h('span', {}, errorText(e)), dismiss());
      banner.className = 'banner error';
      banner.hidden = false;
    },
    notify: (text) => {
      replace(banner, h('span', {}, text), dismiss());
      banner.className = 'banner info';
      banner.hidden = false;
    },
    changed: () => {
      if (current === 'memories')
        void memories.refresh().catch((e: unknown) => {
          ctx.showError(e);
        });
    },
  };
  const memories = new MemoriesView(ctx);
  const agents = new AgentsView(ctx);
  for (const view of [
    new ChatView(ctx),
    memories,
    new ConversationsView(ctx),
    new BlocksView(ctx),
    new MapView(ctx),
    new TransferView(ctx, openOptions, storeWork),
    new SyncView(ctx),
    agents,
    new ForgetView(ctx),
    new StatusView(
      ctx,
      new ModelSection(ctx, {
        choiceKey: MODEL_CHOICE_KEY,
        served: plan.served,
        picked: plan.picked,
        embedderFor: transformersEmbedderFor,
        work: storeWork,
        onModel: (model) => {
          openOptions.embedder = embedderOf(model);
          // The re-embed's result says what happened; the status facts show the model now in use.
          banner.hidden = true;
          if (current === 'status') void show('status');
        },
      }),
      new StoreKeySection(ctx, {
        encryption: () => openOptions.encryption,
        onChanged: ({ encryption, protection }) => {
          // The open engram keeps working with the store's data key; every later opening (an import's, the next
          // start's planning) passes the new key or passphrase.
          openOptions.encryption = encryption;
          ctx.protection = protection;
          if (current === 'status') void show('status');
        },
        work: storeWork,
        closeStore: async () => {
          document.body.dataset['store'] = 'closed';
          await ctx.engram.close();
        },
        reopenStore: async ({ encryption, protection }) => {
          if (encryption === undefined) delete openOptions.encryption;
          else openOptions.encryption = encryption;
          ctx.protection = protection;
          try {
            ctx.engram = await Engram.open({ ...openOptions, name: DB_NAME });
            await ctx.engram.ready();
          } finally {
            document.body.dataset['store'] = ctx.engram.closed ? 'failed' : 'open';
          }
          ctx.changed();
          if (current === 'status') void show('status');
        },
      }),
    ),
  ]) {
    views.set(view.name, view);
    view.root.hidden = true;
  }
  const nav = byId('nav');
  replace(
    nav,
    ...VIEWS.map((name) =>
      h('a', { attrs: { href: `#${name}`, 'data-view': name, 'data-testid': `nav-${name}` } }, LABELS[name]),
    ),
  );
  byId('views').append(...[...views.values()].map((v) => v.root));

  const transfer = views.get('transfer') as TransferView;
  const onMenu = (command: MenuCommand): void => {
    if (paused()) return;
    if (command === 'export') {
      ctx.navigate('transfer');
      void transfer.export();
    } else if (command === 'import') {
      ctx.navigate('transfer');
      // Refused (said in the banner) while a re-embed or a conversion runs: the view's Import says why too.
      transfer.import().catch((e: unknown) => {
        ctx.showError(e);
      });
    } else {
      const name = command.slice('view-'.length);
      if (isView(name)) ctx.navigate(name);
    }
  };
  bridge.onMenuCommand(onMenu);
  // Local agents' MCP calls: answered by this page's engram (the current one: an import replaces it), in each client's scope.
  opened(async (call) => {
    // While a conversion or an import has closed the store the call waits for its reopen, then reads the new engram.
    const answer = await gate.use(AGENT_CALL, () => answerHubCall(ctx.engram, call));
    agents.callAnswered();
    return answer;
  });
  window.addEventListener('hashchange', () => {
    const name = location.hash.slice(1);
    void show(isView(name) ? name : 'chat');
  });
  const first = location.hash.slice(1);
  await show(isView(first) ? first : 'chat');
  loading.hidden = true;
  document.body.dataset['state'] = 'ready';
  document.body.dataset['store'] = 'open';
  if (plan.open.id !== plan.picked.id)
    ctx.notify(`The ${plan.picked.label} is here: Status offers to re-embed your memories with it.`);
  // A conversion at unlock (store-unlock.ts): done, cancelled or failed, said once the app is open.
  if (notice !== undefined) ctx.notify(notice);
}

main().catch((e: unknown) => {
  console.error(e);
  const loading = document.getElementById('loading');
  if (loading !== null) {
    loading.textContent = `engram could not open: ${errorText(e)}`;
    loading.classList.add('error');
  }
  document.body.dataset['state'] = 'failed';
});
