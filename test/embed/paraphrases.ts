/**
 * Sentence pairs that say the same thing in different words (shared by the
 * node and browser tests of the embedders). Pair i's sentences are paraphrases;
 * sentences of different pairs are unrelated.
 */
export const PARAPHRASES: readonly (readonly [string, string])[] = [
  ['The cat rested on the carpet.', 'The kitten slept on the rug.'],
  ['I love programming in TypeScript.', 'Writing TypeScript code is something I enjoy.'],
  ['The user prefers dark mode in the editor.', 'They like a dark theme for their code editor.'],
  ['My flight to Paris leaves on Monday morning.', 'I am flying to Paris early Monday.'],
  ['The stock market fell sharply today.', 'Shares dropped steeply in trading today.'],
  ['She is allergic to peanuts.', 'She has a peanut allergy.'],
  ['The meeting was moved to Thursday afternoon.', 'We rescheduled the meeting for Thursday after lunch.'],
  ['How do I reset my password?', 'I forgot my password and need to change it.'],
  ['My dog loves to play fetch in the park.', 'My puppy enjoys chasing balls at the park.'],
  ['He bought a new car last week.', 'Last week he purchased a new automobile.'],
];

/** Cosine similarity of two unit vectors. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
