/**
 * The demo page's entry: opens engram (the embedding model of the store,
 * ui/model-picking.ts: the best model served unless the store was made with
 * another that is still here; it loads in a Web Worker, with progress), then
 * wires the chat, the scope switch, the search, the memory list and the
 * embedding model panel to it. Everything is read back from the store on
 * every render, so a reload shows exactly what is stored.
 */
import {
  Engram,
  TransformersEmbedder,
  type AtRestEncryption,
  type IndexProgress,
  type KnownEmbeddingModel,
} from '../lib/index.js';
import { ChatCard, DEMO_MODEL_LABELS } from './chat-card.js';
import { errorText, type DemoContext } from './context.js';
import { byId } from '../ui/dom.js';
import { transformersEmbedderFor } from '../ui/reembed-store.js';
import { MemoryPanel } from './memory-panel.js';
import { ScopePanel } from './scope-panel.js';
import { SearchPanel } from './search-panel.js';
import { SettingsPanel } from './settings-panel.js';
import { loadModelSettings, loadScope } from './settings.js';
import { StatusLine } from './status-line.js';
import { EmbeddingPanel } from './embedding-panel.js';
import { holdPanels } from './hold-panels.js';
import { EncryptionCard, unlockDemoStore } from './store-encryption.js';
import { StoreGate } from '../ui/store-gate.js';
import { StoreWork } from '../ui/store-work.js';

/** The IndexedDB database of the demo. */
const DB_NAME = 'engram-demo';
/** localStorage key of the embedding model picked in the settings. */
const MODEL_CHOICE_KEY = 'engram-demo:embedding-model';
/**
 * The panels held while the store is converted: every card but the encryption card (the re-embed card too)
 * and the chat, of which only the model settings (a message sent meanwhile waits for the reopen, StoreGate).
 */
const HELD_PANELS = '.reembed-card, .layout .card:not(.encryption):not(.chat), #settings-toggle, #settings';

async function main(): Promise<void> {
  const status = new StatusLine();
  const started = performance.now();
  // An encrypted store (opt-in, the card below) asks for its passphrase first; every opening then passes it.
  const access = await unlockDemoStore(DB_NAME, MODEL_CHOICE_KEY, byId('unlock'));
  const plan = access.plan;
  let encryption: AtRestEncryption | undefined = access.encryption;
  const openWith = (model: KnownEmbeddingModel, onIndex?: (p: IndexProgress) => void): Promise<Engram> =>
    Engram.open({
      name: DB_NAME,
      ...(encryption === undefined ? {} : { encryption }),
      embedder: () =>
        TransformersEmbedder.create({
          model: model.id,
          onProgress: (p) => {
            status.model(p);
          },
        }),
      onProgress: (p) => {
        status.index(p);
        onIndex?.(p);
      },
      // The store's own model is not served here: opening re-embeds with the picked one.
      ...(model === plan.open && plan.reembedAtOpen ? { reembed: true } : {}),
    });
  const engram = await openWith(plan.open);
  const info = await engram.ready();
  status.ready(info, performance.now() - started);

  const ctx: DemoContext = {
    engram,
    scope: loadScope(),
    model: loadModelSettings(),
    refresh: async () => {
      // A snapshot after each change (a no-op when nothing changed) lets the next load restore the
      // index instead of rebuilding it; cheap at demo sizes. close() and large batches do it anyway.
      await ctx.engram.flush();
      const [{ total }, { size }] = await Promise.all([ctx.engram.getAll({ limit: 1 }), ctx.engram.ready()]);
      status.counts(total, size);
      await Promise.all([
        chat.render(),
        scope.render(),
        memories.render(),
        search.render(),
        embedding.render(),
        encryptionCard.render(),
      ]);
    },
    showError: (e) => {
      chat.showError(e);
    },
  };
  // A conversion closes the store once the chat turn streaming is stored; a message sent meanwhile waits for the
  // reopen (kept on screen), or is refused with why when the reopen failed (its text back in the composer).
  const gate = new StoreGate(() => !ctx.engram.closed);
  const chat = new ChatCard(ctx, gate);
  const scope = new ScopePanel(ctx);
  const search = new SearchPanel(ctx);
  const memories = new MemoryPanel(ctx);
  new SettingsPanel(ctx);
  // A re-embed and a conversion of the store's encryption: one at a time, the other's start disabled meanwhile.
  const storeWork = new StoreWork();
  const encryptionCard = new EncryptionCard(ctx, {
    dbName: DB_NAME,
    encryption,
    reopen: async (model, next, onIndex) => {
      encryption = next;
      const reopened = Date.now();
      const engram = await openWith(model ?? plan.picked, onIndex);
      // The status line then says how this open got its index (restored, or rebuilt, after a conversion).
      status.ready(await engram.ready(), Date.now() - reopened);
      return engram;
    },
    // The page's instance is closed while the store is converted: no other panel may reach for it.
    hold: (held) => {
      const panels = document.querySelectorAll<HTMLElement>(HELD_PANELS);
      holdPanels([...panels, byId('reset')], held);
    },
    // Converting, then the page's refresh says ready again (with the counts of the reopened store), or the failure.
    status,
    work: storeWork,
    gate,
  });
  byId('side').append(encryptionCard.root);
  const embedding = new EmbeddingPanel(ctx, {
    choiceKey: MODEL_CHOICE_KEY,
    served: plan.served,
    picked: plan.picked,
    embedderFor: transformersEmbedderFor,
    work: storeWork,
    onReembedded: async (engram, ms) => {
      status.ready(await engram.ready(), ms);
      await ctx.refresh();
    },
  });

  const reset = byId('reset', 'button');
  reset.addEventListener('click', () => {
    if (!window.confirm('Forget every conversation and memory stored by this demo in this browser?')) return;
    void ctx.engram
      .reset()
      .then(() => {
        DEMO_MODEL_LABELS.clear();
        return ctx.refresh();
      })
      .catch((e: unknown) => {
        ctx.showError(e);
      });
  });

  scope.enable();
  search.enable();
  chat.enable();
  reset.disabled = false;
  await ctx.refresh();
  document.body.dataset['state'] = 'ready';
}

main().catch((e: unknown) => {
  console.error(e);
  new StatusLine().failed(`Could not open engram: ${errorText(e)}`);
});
