/**
 * Evaluated before EntityDB's module (imported first by entitydb.ts): EntityDB
 * starts loading a sentence model from the Hugging Face hub when it is
 * imported. bench/peers gives it precomputed vectors and must fetch nothing
 * from the network, so its transformers.js copy is told to load no model
 * from anywhere; the pipeline it starts then fails at once, unused, and that
 * one rejection is not reported as a page error.
 */
import { env } from '@xenova/transformers';

env.allowRemoteModels = false;
env.allowLocalModels = false;

const NO_MODEL = 'both local and remote models are disabled';
window.addEventListener('unhandledrejection', (event) => {
  const reason: unknown = event.reason;
  if (reason instanceof Error && reason.message.includes(NO_MODEL)) event.preventDefault();
});
