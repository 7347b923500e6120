import { afterEach, describe, expect, it } from 'vitest';
import { Assistant, DEFAULT_RETRIEVAL_PROFILE, retrievalProfile, type Engram } from '../../lib/index.js';
import { RECALL_LIMIT, recallThreshold } from '../../ui/chat-panel.js';
import { scriptedAgent } from '../../ui/scripted-agent.js';
import { SUGGESTIONS } from '../../demo/suggestions.js';
import { openTemp } from '../helpers.js';

/** "I am" → "I'm" and back: the two ways a visitor may type a chip's statement. */
function otherPhrasing(text: string): string {
  return text.includes('I am') ? text.replaceAll('I am', "I'm") : text.replaceAll("I'm", 'I am');
}

let engram: Engram | undefined;
afterEach(async () => {
  await engram?.close();
  engram = undefined;
});

describe('demo suggestion chips', () => {
  it("the chat's recall threshold is the library's default for the model in use", async () => {
    engram = await openTemp();
    const { embedderId } = await engram.ready();
    expect(await recallThreshold(engram)).toBe(retrievalProfile(embedderId).minRelevance);
    expect(embedderId).toBe('engram-glove-100d');
    expect(await recallThreshold(engram)).not.toBe(DEFAULT_RETRIEVAL_PROFILE.minRelevance);
  });

  for (const [userId, chips] of Object.entries(SUGGESTIONS)) {
    for (const phrasing of ['as offered', 'rephrased'] as const) {
      it(`each question chip of ${userId} recalls the statement it asks about (${phrasing})`, async () => {
        // The real offline model, as the demo loads it.
        engram = await openTemp();
        const assistant = new Assistant(engram, {
          threadId: `t-${userId}`,
          agentId: 'helper',
          userId,
          model: scriptedAgent,
          recallLimit: RECALL_LIMIT,
        });
        const said = (text: string): string => (phrasing === 'as offered' ? text : otherPhrasing(text));
        const questions = chips.filter((c) => c.answer !== undefined);
        expect(questions.length).toBeGreaterThan(0);
        for (const statement of chips.filter((c) => c.answer === undefined)) await assistant.send(said(statement.text));
        for (const question of questions) {
          const turn = await assistant.send(question.text);
          expect(
            turn.recalledMemories.map((m) => m.memory),
            question.text,
          ).toContain(said(question.answer!));
          expect(turn.reply).toMatch(/^I remember that /);
        }
      });
    }
  }

  it('every question chip names a statement chip of the same user', () => {
    for (const chips of Object.values(SUGGESTIONS)) {
      const statements = new Set(chips.filter((c) => c.answer === undefined).map((c) => c.text));
      for (const c of chips) if (c.answer !== undefined) expect(statements.has(c.answer)).toBe(true);
    }
  });
});
