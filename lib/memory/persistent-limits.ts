/**
 * The limits of one persistent-memory call, apart from persistent.ts so that
 * the tool definitions (and the desktop main process, which lists them without
 * a store) can name them without importing the memory code. Constants only.
 */

/**
 * Most facts one `saveToMemory` call stores: each is embedded and checked for
 * duplicates, so a model's call with thousands of them would hold the store for
 * long. More is refused with a ValidationError the model reads and can act on
 * (save the most important ones, or call again).
 */
export const MAX_FACTS_PER_SAVE = 20;

/** Most keywords one `recallFromMemory` call searches for (each is one search); more is refused like too many facts. */
export const MAX_KEYWORDS_PER_RECALL = 20;
