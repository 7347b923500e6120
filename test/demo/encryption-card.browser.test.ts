// The demo's "Encryption at rest" card (demo/store-encryption.ts) on a real DOM and real IndexedDB in
// Chromium, when things go wrong (the end-to-end test, passphrase.e2e.test.ts, runs the happy paths on
// the page): a store whose ready() fails is not converted and nothing stays held; a reopen that fails
// after the conversion is said on the card and the status line with the store's real state, the
// panels are released and the card's "Reopen the store" opens it; a re-embed running on the store
// disables the conversion (with why) and refuses it. Hash embedders stand in for the models.
import { afterEach, describe, expect, it } from 'vitest';
import { Engram, HashEmbedder, ModelLoadError, type AtRestEncryption } from '../../lib/index.js';
import { ChatCard } from '../../demo/chat-card.js';
import { threadOf } from '../../demo/settings.js';
import type { DemoContext } from '../../demo/context.js';
import { holdPanels } from '../../demo/hold-panels.js';
import { StatusLine } from '../../demo/status-line.js';
import { EncryptionCard } from '../../demo/store-encryption.js';
import { REEMBED_WORK } from '../../ui/model-picker.js';
import { StoreGate } from '../../ui/store-gate.js';
import { StoreWork } from '../../ui/store-work.js';

const PASSPHRASE = 'copper kettle at dawn';
const opened: Engram[] = [];

function open(name: string, encryption?: AtRestEncryption): Promise<Engram> {
  return Engram.open({
    name,
    embedder: new HashEmbedder({ dimensions: 16 }),
    ...(encryption === undefined ? {} : { encryption }),
  }).then((engram) => {
    opened.push(engram);
    return engram;
  });
}

interface Page {
  readonly name: string;
  readonly ctx: DemoContext;
  readonly card: EncryptionCard;
  /** A panel of the page, held while the store is converted. */
  readonly panel: HTMLElement;
  readonly panelInput: HTMLInputElement;
  readonly status: HTMLElement;
  readonly work: StoreWork;
  /** The page's chat card, its turns through the page's store gate. */
  readonly chat: ChatCard;
  /** How many reopens the test's page made. */
  readonly reopens: { count: number };
  /** Called as the card holds (true) and releases (false) the page's panels: the store closes right after a hold. */
  onHold: (held: boolean) => void;
}

/**
 * The page around the card as demo/main.ts wires it: the status line's elements, one other panel (held
 * while the store is converted), a refresh that says ready with the counts. `failReopens` reopens fail first.
 */
async function page(engram: Engram, name: string, failReopens = 0): Promise<Page> {
  const root = document.createElement('div');
  root.innerHTML = `<div id="status" data-testid="status"><span id="status-text"></span></div>
    <div id="loading"><div id="loading-bar"></div><div id="loading-detail"></div></div>
    <section id="panel" class="card"><input id="panel-input" /></section>
    <section class="card chat"><h2 id="chat-title"></h2><p id="chat-subtitle"></p><div id="chat-mount"></div></section>`;
  document.body.append(root);
  const status = new StatusLine();
  const panel = root.querySelector<HTMLElement>('#panel')!;
  const reopens = { count: 0 };
  const work = new StoreWork();
  const ctx: DemoContext = {
    engram,
    scope: { userId: 'ana', agentId: 'assistant' },
    model: { kind: 'scripted' },
    refresh: async () => {
      const info = await ctx.engram.ready();
      status.ready(info, 1);
      status.counts((await ctx.engram.getAll({ limit: 1 })).total, info.size);
      await Promise.all([card.render(), chat.render()]);
    },
    showError: (e) => {
      throw e;
    },
  };
  const gate = new StoreGate(() => !ctx.engram.closed);
  const chat = new ChatCard(ctx, gate);
  const card = new EncryptionCard(ctx, {
    dbName: name,
    encryption: undefined,
    reopen: async (_model, encryption) => {
      reopens.count++;
      if (reopens.count <= failReopens) throw new ModelLoadError('the model did not load (test)');
      return open(name, encryption);
    },
    hold: (held) => {
      holdPanels([panel], held);
      result.onHold(held);
    },
    status,
    work,
    gate,
  });
  root.append(card.root);
  const result: Page = {
    name,
    ctx,
    card,
    panel,
    panelInput: root.querySelector<HTMLInputElement>('#panel-input')!,
    status: root.querySelector<HTMLElement>('#status')!,
    work,
    chat,
    reopens,
    onHold: () => undefined,
  };
  return result;
}

function testid(p: Page, id: string): HTMLElement {
  return p.card.root.querySelector<HTMLElement>(`[data-testid="${id}"]`)!;
}

/** Types the passphrase twice and submits the card's encrypt form; resolves once the card is not busy and said it. */
async function encrypt(p: Page): Promise<string> {
  (testid(p, 'encrypt-passphrase') as HTMLInputElement).value = PASSPHRASE;
  (testid(p, 'encrypt-confirm') as HTMLInputElement).value = PASSPHRASE;
  const message = testid(p, 'encrypt-message');
  message.dataset['state'] = 'idle';
  (testid(p, 'encrypt-form') as HTMLFormElement).requestSubmit();
  await expect
    .poll(() => p.card.root.dataset['busy'] !== 'true' && ['error', 'info'].includes(message.dataset['state'] ?? ''), {
      timeout: 20_000,
    })
    .toBe(true);
  return message.textContent;
}

/** Whether the store opens without a passphrase (plain) and what it remembers. */
async function storeIsPlain(name: string): Promise<boolean> {
  try {
    const engram = await open(name);
    return (await engram.getAll()).total >= 0;
  } catch {
    return false;
  }
}

function held(p: Page): boolean[] {
  return [p.panel.inert, p.panel.hasAttribute('data-held'), p.panelInput.matches(':disabled')];
}

afterEach(async () => {
  for (const e of opened.splice(0)) await e.close();
  document.body.replaceChildren();
});

describe('EncryptionCard when a conversion goes wrong', () => {
  it('a ready() that fails before the store is closed: nothing converted, the panels released, the error said on the card and the status line', async () => {
    const name = `demo-card-ready-${Date.now()}`;
    // The page's instance on a new store: its embedder (loaded at first use) does not load, so its ready() rejects.
    const engram = await Engram.open({
      name,
      embedder: () => Promise.reject(new ModelLoadError('the model did not load (test)')),
    });
    opened.push(engram);
    const p = await page(engram, name);
    await p.card.render();
    const said = await encrypt(p);
    expect(said).toMatch(/^The store was not converted \(MODEL_LOAD: the model did not load \(test\)\); it is plain/);
    expect(held(p)).toEqual([false, false, false]);
    expect(p.status.dataset['state']).toBe('failed');
    expect(p.status.textContent).toBe(said);
    expect(p.card.root.dataset['encrypted']).toBe('false');
    expect((testid(p, 'encrypt-button') as HTMLButtonElement).disabled).toBe(false);
    expect(p.reopens.count).toBe(0);
    expect(p.work.running).toBeUndefined();
    // Still plain and open: the page's instance was not closed, and the store opens without a passphrase.
    expect(engram.closed).toBe(false);
    expect(await storeIsPlain(name)).toBe(true);
  });

  it('a reopen that fails after the conversion: said with the store encrypted, the panels released; "Reopen the store" opens it', async () => {
    const name = `demo-card-reopen-${Date.now()}`;
    const engram = await open(name);
    await engram.add('Ana keeps bees in Porto', { userId: 'ana', infer: false });
    const p = await page(engram, name, 1);
    await p.ctx.refresh();
    expect(p.status.dataset['state']).toBe('ready');
    const said = await encrypt(p);
    expect(said).toMatch(
      /^Converted: the store is encrypted with your passphrase now, but reopening it failed \(MODEL_LOAD: .*\)\. Try “Reopen the store”, or reload the page\.$/,
    );
    // Not "being converted": the status line says what happened and how the store is.
    expect(p.status.dataset['state']).toBe('failed');
    expect(p.status.textContent).toMatch(
      /^The store could not be reopened after its conversion \(MODEL_LOAD: .*\): it is encrypted with your passphrase\. Reopen it from Encryption at rest, or reload the page\.$/,
    );
    expect(held(p)).toEqual([false, false, false]);
    expect(p.work.running).toBeUndefined();
    // The card offers the reopen instead of the forms; the store is encrypted (it does not open plain).
    const reopen = testid(p, 'reopen-button') as HTMLButtonElement;
    expect([reopen.hidden, reopen.disabled]).toEqual([false, false]);
    expect(testid(p, 'encrypt-form').hidden).toBe(true);
    expect(testid(p, 'encryption-state').textContent).toMatch(/closed and encrypted/);
    expect(await storeIsPlain(name)).toBe(false);

    reopen.click();
    await expect.poll(() => p.status.dataset['state'], { timeout: 20_000 }).toBe('ready');
    // The card says so once its own reopen has settled, which may come a moment after the status line.
    await expect
      .poll(() => testid(p, 'encrypt-message').textContent, { timeout: 20_000 })
      .toBe('The store is open again, encrypted with your passphrase.');
    expect(p.reopens.count).toBe(2);
    expect(p.ctx.engram.closed).toBe(false);
    expect((await p.ctx.engram.getAll()).results.map((m) => m.memory)).toEqual(['Ana keeps bees in Porto']);
    expect([reopen.hidden, testid(p, 'decrypt-form').hidden, p.card.root.dataset['encrypted']]).toEqual([
      true,
      false,
      'true',
    ]);
  });

  it('a message sent while the store is closed waits on screen; the reopen failing, it goes back to the composer with why; sent again once reopened, it is stored', async () => {
    const name = `demo-card-chat-${Date.now()}`;
    const engram = await open(name);
    const p = await page(engram, name, 1);
    await p.ctx.refresh();
    p.chat.enable();
    const chat = document.querySelector<HTMLElement>('#chat-mount')!;
    const input = chat.querySelector<HTMLInputElement>('[data-testid="chat-input"]')!;
    const seen: string[] = [];
    // The moment the store closes, a message typed and sent: it leaves the composer for a waiting bubble.
    p.onHold = (held) => {
      if (!held) return;
      p.onHold = () => undefined;
      input.value = 'Where is my bicycle?';
      chat.querySelector<HTMLButtonElement>('[data-testid="send"]')!.click();
      seen.push(input.value, chat.querySelector('[data-testid="streaming"] .bubble')?.textContent ?? '');
    };
    expect(await encrypt(p)).toMatch(
      /^Converted: the store is encrypted with your passphrase now, but reopening it failed/,
    );
    expect(seen).toEqual([
      '',
      'Waiting: the store is closed for a conversion of the store’s encryption; your message is sent once it reopens…',
    ]);
    // The reopen failed: the text is back in the composer, with why, and nothing of it waits on screen.
    await expect.poll(() => input.value, { timeout: 20_000 }).toBe('Where is my bicycle?');
    const error = chat.querySelector<HTMLElement>('[data-testid="chat-error"]')!;
    expect([error.hidden, error.querySelector('span')?.textContent]).toEqual([
      false,
      'STORE: the store is closed (it did not open again after a conversion of the store’s encryption): a chat turn was not run; open the store again, then retry',
    ]);
    expect(chat.querySelectorAll('.pending')).toHaveLength(0);
    expect([input.disabled, p.ctx.engram.closed]).toEqual([false, true]);

    (testid(p, 'reopen-button') as HTMLButtonElement).click();
    await expect.poll(() => p.status.dataset['state'], { timeout: 20_000 }).toBe('ready');
    chat.querySelector<HTMLButtonElement>('[data-testid="retry"]')!.click();
    await expect.poll(() => chat.querySelectorAll('[data-testid="turn"]').length, { timeout: 20_000 }).toBe(1);
    expect([...chat.querySelectorAll('.msg.user .bubble')].map((b) => b.textContent)).toEqual(['Where is my bicycle?']);
    const stored = await p.ctx.engram.conversation(threadOf(p.ctx.scope), p.ctx.scope).getMessages();
    expect(stored.map((m) => m.content)).toContain('Where is my bicycle?');
  });

  it('a reopen that fails after a cancelled conversion: said with the store still plain', async () => {
    const name = `demo-card-cancel-${Date.now()}`;
    const engram = await open(name);
    await engram.add('Ana keeps bees in Porto', { userId: 'ana', infer: false });
    const p = await page(engram, name, 1);
    await p.ctx.refresh();
    // Cancel as the conversion starts (its Cancel button shows before the first row is converted).
    const cancel = testid(p, 'conversion-cancel') as HTMLButtonElement;
    const observer = new MutationObserver(() => {
      if (!cancel.hidden && !cancel.disabled) cancel.click();
    });
    observer.observe(testid(p, 'conversion-progress'), { attributes: true, subtree: true });
    const said = await encrypt(p);
    observer.disconnect();
    expect(said).toMatch(
      /^Cancelled: the store was left as it was\. The store is plain \(not encrypted\), as before, but reopening it failed \(MODEL_LOAD: .*\)\./,
    );
    expect(p.status.textContent).toMatch(
      /could not be reopened after its conversion .*: it is plain \(not encrypted\)\./,
    );
    expect(held(p)).toEqual([false, false, false]);
    expect(await storeIsPlain(name)).toBe(true);
  });
});

describe('EncryptionCard and a re-embed (StoreWork)', () => {
  it('while a re-embed runs the buttons are disabled with why, a submit is refused; once it ends the conversion runs', async () => {
    const name = `demo-card-work-${Date.now()}`;
    const engram = await open(name);
    const p = await page(engram, name);
    await p.ctx.refresh();
    const button = testid(p, 'encrypt-button') as HTMLButtonElement;
    const release = p.work.begin(REEMBED_WORK);
    const why =
      'Busy: a re-embed with another model is running; a conversion of the store’s encryption can start once it ends.';
    expect([button.disabled, button.title]).toEqual([true, why]);
    expect([testid(p, 'encrypt-blocked').hidden, testid(p, 'encrypt-blocked').textContent]).toEqual([false, why]);
    // A submit anyway (Enter in a field): refused, nothing held or converted, the passphrase kept in its field.
    expect(await encrypt(p)).toBe(why);
    expect(held(p)).toEqual([false, false, false]);
    expect(p.reopens.count).toBe(0);
    expect((testid(p, 'encrypt-passphrase') as HTMLInputElement).value).toBe(PASSPHRASE);
    expect(p.ctx.engram.closed).toBe(false);

    release();
    expect([button.disabled, button.hasAttribute('title'), testid(p, 'encrypt-blocked').hidden]).toEqual([
      false,
      false,
      true,
    ]);
    // While the conversion runs, a re-embed cannot start.
    let during: string | undefined;
    const watching = p.work.watch((running) => {
      if (running !== undefined)
        try {
          p.work.begin(REEMBED_WORK);
        } catch (e) {
          during = (e as Error).message;
        }
    });
    expect(await encrypt(p)).toMatch(/^Encrypted \(\d+ rows sealed\)/);
    watching();
    expect(during).toBe(
      'Busy: a conversion of the store’s encryption is running; a re-embed with another model can start once it ends.',
    );
    expect(p.work.running).toBeUndefined();
    expect(p.card.root.dataset['encrypted']).toBe('true');
  });
});
