/**
 * The demo page's entry: opens engram (the offline embedding model loads in a
 * Web Worker, with progress), then wires the chat, the scope switch, the
 * search and the memory list to it. Everything is read back from the store on
 * every render, so a reload shows exactly what is stored.
 */
import { Engram, TransformersEmbedder } from '../lib/index.js';
import { ChatCard, DEMO_MODEL_LABELS } from './chat-card.js';
import { errorText, type DemoContext } from './context.js';
import { byId } from '../ui/dom.js';
import { MemoryPanel } from './memory-panel.js';
import { ScopePanel } from './scope-panel.js';
import { SearchPanel } from './search-panel.js';
import { SettingsPanel } from './settings-panel.js';
import { loadModelSettings, loadScope } from './settings.js';
import { StatusLine } from './status-line.js';

/** The IndexedDB database of the demo. */
const DB_NAME = 'engram-demo';

async function main(): Promise<void> {
  const status = new StatusLine();
  const started = performance.now();
  const engram = await Engram.open({
    name: DB_NAME,
    embedder: () =>
      TransformersEmbedder.create({
        onProgress: (p) => {
          status.model(p);
        },
      }),
    onProgress: (p) => {
      status.index(p);
    },
  });
  const info = await engram.ready();
  status.ready(info, performance.now() - started);

  const ctx: DemoContext = {
    engram,
    scope: loadScope(),
    model: loadModelSettings(),
    refresh: async () => {
      // A snapshot after each change (a no-op when nothing changed) lets the next load restore the
      // index instead of rebuilding it; cheap at demo sizes. close() and large batches do it anyway.
      await engram.flush();
      const [{ total }, { size }] = await Promise.all([engram.getAll({ limit: 1 }), engram.ready()]);
      status.counts(total, size);
      await Promise.all([chat.render(), scope.render(), memories.render(), search.render()]);
    },
    showError: (e) => {
      chat.showError(e);
    },
  };
  const chat = new ChatCard(ctx);
  const scope = new ScopePanel(ctx);
  const search = new SearchPanel(ctx);
  const memories = new MemoryPanel(ctx);
  new SettingsPanel(ctx);

  const reset = byId('reset', 'button');
  reset.addEventListener('click', () => {
    if (!window.confirm('Forget every conversation and memory stored by this demo in this browser?')) return;
    void engram
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
