/**
 * The chips under the chat: statements a visitor can tell each demo user's
 * agent, and questions about them. Each question names the statement it asks
 * about, so a test can check that the chat recalls it (test/demo/suggestions.test.ts).
 */

/** One chip. */
export interface Suggestion {
  text: string;
  /** For a question: the statement (another chip of the same user) that answers it. */
  answer?: string;
}

/** Chips per demo user, in the order they are offered. */
export const SUGGESTIONS: Readonly<Record<string, readonly Suggestion[]>> = {
  ana: [
    { text: 'My name is Ana and I live in Porto' },
    { text: 'I am allergic to peanuts' },
    { text: 'Where do I live?', answer: 'My name is Ana and I live in Porto' },
    { text: 'What can I not eat?', answer: 'I am allergic to peanuts' },
  ],
  ben: [
    { text: 'I am Ben and I work as a nurse in Lisbon' },
    { text: 'I love jazz and cycling' },
    { text: 'What do I like?', answer: 'I love jazz and cycling' },
    { text: 'Where do I work?', answer: 'I am Ben and I work as a nurse in Lisbon' },
  ],
};
