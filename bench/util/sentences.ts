/**
 * Seeded English-like sentences from a small word grammar, for benchmarks that
 * need text an embedding model can tell apart: ten everyday topics, each with
 * its own subjects, verbs, objects and places, plus shared modifiers. Sentences
 * of one topic embed near each other; templates vary word order and length.
 */
import { mulberry32, pick, type Rng } from './rng.js';

interface Topic {
  subjects: readonly string[];
  verbs: readonly string[];
  objects: readonly string[];
  places: readonly string[];
}

const TOPICS: readonly Topic[] = [
  {
    subjects: ['my sister', 'the chef', 'our neighbour', 'grandma', 'the baker'],
    verbs: ['cooked', 'baked', 'tasted', 'prepared', 'burned', 'ordered'],
    objects: ['pasta', 'a chocolate cake', 'fresh bread', 'spicy soup', 'roasted vegetables', 'pancakes'],
    places: ['in the kitchen', 'at the restaurant', 'for dinner', 'at the bakery', 'for breakfast'],
  },
  {
    subjects: ['we', 'the tourists', 'my brother', 'the pilot', 'our family'],
    verbs: ['visited', 'booked', 'explored', 'flew to', 'missed', 'photographed'],
    objects: ['the old castle', 'a cheap flight', 'the museum', 'a hotel room', 'the beach', 'the mountains'],
    places: ['in italy', 'near the airport', 'during the holiday', 'in paris', 'on the island'],
  },
  {
    subjects: ['the manager', 'my colleague', 'the team', 'the engineer', 'our client'],
    verbs: ['approved', 'reviewed', 'postponed', 'presented', 'rejected', 'finished'],
    objects: ['the budget', 'a new project', 'the quarterly report', 'the contract', 'the deadline', 'the meeting'],
    places: ['at the office', 'before lunch', 'in the conference room', 'on friday', 'after the call'],
  },
  {
    subjects: ['the doctor', 'my father', 'the nurse', 'the patient', 'my friend'],
    verbs: ['recommended', 'prescribed', 'needed', 'avoided', 'started', 'tried'],
    objects: ['more sleep', 'a blood test', 'the medicine', 'a healthy diet', 'daily exercise', 'physical therapy'],
    places: ['at the hospital', 'after the surgery', 'at the clinic', 'every morning', 'during recovery'],
  },
  {
    subjects: ['the band', 'my daughter', 'the orchestra', 'the singer', 'the drummer'],
    verbs: ['played', 'recorded', 'practiced', 'performed', 'composed', 'loved'],
    objects: ['a jazz song', 'the piano', 'a new album', 'the guitar', 'a classical symphony', 'the concert'],
    places: ['on stage', 'in the studio', 'at the festival', 'last night', 'at the theatre'],
  },
  {
    subjects: ['the coach', 'our team', 'the striker', 'my son', 'the players'],
    verbs: ['won', 'lost', 'trained for', 'watched', 'scored in', 'celebrated'],
    objects: [
      'the football match',
      'the championship',
      'the tennis final',
      'the marathon',
      'the basketball game',
      'the race',
    ],
    places: ['at the stadium', 'in the rain', 'on saturday', 'at the gym', 'in the second half'],
  },
  {
    subjects: ['the bank', 'my accountant', 'the investor', 'my wife', 'the company'],
    verbs: ['paid', 'borrowed', 'invested', 'saved', 'lost', 'transferred'],
    objects: ['the mortgage', 'a large loan', 'the taxes', 'some money', 'the pension', 'the stock'],
    places: ['last month', 'at the bank', 'this year', 'before the deadline', 'online'],
  },
  {
    subjects: ['the developer', 'my laptop', 'the server', 'the programmer', 'the software'],
    verbs: ['crashed', 'updated', 'installed', 'debugged', 'deployed', 'downloaded'],
    objects: ['the database', 'a security patch', 'the website', 'the new version', 'the network', 'the code'],
    places: ['overnight', 'in the cloud', 'after the update', 'on the server', 'during the outage'],
  },
  {
    subjects: ['the forecast', 'the storm', 'the wind', 'the farmers', 'the weather'],
    verbs: ['brought', 'destroyed', 'predicted', 'flooded', 'cooled', 'damaged'],
    objects: ['heavy rain', 'the crops', 'snow', 'the river', 'strong winds', 'the roads'],
    places: ['in the north', 'this winter', 'across the valley', 'near the coast', 'all week'],
  },
  {
    subjects: ['my grandson', 'the kids', 'my mother', 'the twins', 'our cousin'],
    verbs: ['celebrated', 'organized', 'forgot', 'remembered', 'planned', 'enjoyed'],
    objects: ['the birthday party', 'a family dinner', 'the wedding', 'the anniversary', 'the school play', 'a picnic'],
    places: ['at home', 'in the garden', 'last weekend', 'with the neighbours', 'at the park'],
  },
];

const ADJECTIVES = ['really', 'finally', 'quickly', 'quietly', 'happily', 'suddenly', 'carefully', 'again'];
const OPENERS = ['yesterday', 'today', 'last year', 'this morning', 'recently', 'once'];

function sentence(rng: Rng, topic: Topic): string {
  const s = pick(rng, topic.subjects);
  const v = pick(rng, topic.verbs);
  const o = pick(rng, topic.objects);
  const p = pick(rng, topic.places);
  switch (Math.floor(rng() * 4)) {
    case 0:
      return `${s} ${v} ${o} ${p}.`;
    case 1:
      return `${pick(rng, OPENERS)} ${s} ${pick(rng, ADJECTIVES)} ${v} ${o}.`;
    case 2:
      return `${p} ${s} ${v} ${o} and ${pick(rng, topic.verbs)} ${pick(rng, topic.objects)}.`;
    default:
      return `i think ${s} ${v} ${o} ${p} ${pick(rng, OPENERS)}.`;
  }
}

/**
 * `count` sentences, deterministic for `seed`, spread over ten topics.
 * @example
 * const corpus = generateSentences(20_000, 1);
 * const queries = generateSentences(200, 2);
 */
export function generateSentences(count: number, seed: number): string[] {
  const rng = mulberry32(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(sentence(rng, pick(rng, TOPICS)));
  return out;
}
