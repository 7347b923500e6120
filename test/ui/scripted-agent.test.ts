// The scripted agent (the demo's and the desktop chat's offline model): deterministic replies from the prompt engram builds.
import { describe, expect, it } from 'vitest';
import { isQuestion, recalledFrom, scriptedReply, secondPerson } from '../../ui/scripted-agent.js';

const memories = (...lines: string[]) => ({
  role: 'system' as const,
  content: ['Relevant memories:', ...lines.map((l) => `- ${l}`)].join('\n'),
});
const user = (content: string) => ({ role: 'user' as const, content });
const system = { role: 'system' as const, content: 'You are a helpful assistant with long-term memory.' };

describe('scripted agent', () => {
  it('secondPerson() turns first person into second person', () => {
    expect(secondPerson('My name is Ana and I live in Porto')).toBe('your name is Ana and you live in Porto');
    expect(secondPerson('I am allergic to peanuts.')).toBe('you are allergic to peanuts');
    expect(secondPerson("I'm Ben; call me Benny")).toBe("you're Ben; call you Benny");
  });

  it('isQuestion() tells questions from statements', () => {
    expect(isQuestion('Where do I live?')).toBe(true);
    expect(isQuestion('what can I eat')).toBe(true);
    expect(isQuestion('I live in Porto')).toBe(false);
  });

  it('recalledFrom() reads the memories of the "Relevant memories:" block only', () => {
    expect(recalledFrom([system, memories('I live in Porto', 'I am allergic to peanuts'), user('hi')])).toEqual([
      'I live in Porto',
      'I am allergic to peanuts',
    ]);
    expect(recalledFrom([system, user('hi')])).toEqual([]);
  });

  it('scriptedReply() answers a question from the recalled memories, skipping stored questions', () => {
    const prompt = [
      system,
      memories('Where do I live?', 'My name is Ana and I live in Porto'),
      user('Where do I live?'),
    ];
    expect(scriptedReply(prompt)).toBe('I remember that your name is Ana and you live in Porto.');
  });

  it('scriptedReply() says so when nothing relevant was recalled', () => {
    expect(scriptedReply([system, user('Where do I live?')])).toBe(
      "I don't know that yet. Tell me, and I'll remember it.",
    );
  });

  it('scriptedReply() acknowledges a statement and is deterministic', () => {
    const prompt = [system, user('I am allergic to peanuts')];
    expect(scriptedReply(prompt)).toMatch(/^Got it: you are allergic to peanuts\. /);
    expect(scriptedReply(prompt)).toBe(scriptedReply(prompt));
  });

  it('scriptedReply() greets, mentioning a recalled fact when there is one', () => {
    expect(scriptedReply([system, user('Hello!')])).toMatch(/^Hello! Tell me something about yourself/);
    expect(scriptedReply([system, memories('I live in Porto'), user('hi')])).toBe(
      'Hello again! I remember that you live in Porto.',
    );
  });
});
