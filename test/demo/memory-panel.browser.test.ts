// The demo's "Stored memories" card (demo/memory-panel.ts) on a real DOM in Chromium: when the user
// switches scope twice in a row, the card shows the last scope's memories even when the first read
// answers last.
import { afterEach, describe, expect, it } from 'vitest';
import type { DemoContext } from '../../demo/context.js';
import { MemoryPanel } from '../../demo/memory-panel.js';
import type { Engram } from '../../lib/index.js';

afterEach(() => {
  document.getElementById('memory-panel-test')?.remove();
});

/** The card's elements, as the demo's page has them. */
function card(): HTMLOListElement {
  const root = document.createElement('div');
  root.id = 'memory-panel-test';
  root.innerHTML = '<ol id="memory-list"></ol><span id="memory-count"></span><button id="delete-scope"></button>';
  document.body.append(root);
  return root.querySelector('ol')!;
}

describe('MemoryPanel', () => {
  it('a render that answers after a newer one (another scope) leaves the card to the newer one', async () => {
    const list = card();
    const answers: Record<string, (memories: string[]) => void> = {};
    const engram = {
      getAll: ({ agentId }: { agentId: string }) =>
        new Promise((resolve) => {
          answers[agentId] = (memories) => {
            resolve({
              total: memories.length,
              results: memories.map((memory, i) => ({ id: `${agentId}${i}`, memory, createdAt: 0, version: 1 })),
            });
          };
        }),
    } as unknown as Engram;
    const ctx: DemoContext = {
      engram,
      scope: { userId: 'ana', agentId: 'helper' },
      model: {} as DemoContext['model'],
      refresh: () => Promise.resolve(),
      showError: (e) => {
        throw e;
      },
    };
    const panel = new MemoryPanel(ctx);
    const first = panel.render();
    ctx.scope = { userId: 'ana', agentId: 'planner' };
    const second = panel.render();
    answers['planner']!([]);
    await second;
    answers['helper']!(['I am allergic to peanuts']);
    await first;
    expect(list.dataset['scope']).toBe('ana/planner');
    expect(document.getElementById('memory-count')!.textContent).toBe('0');
    expect(list.textContent).not.toContain('peanuts');
  });
});
