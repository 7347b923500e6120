/**
 * Everything a user and an assistant say besides the facts: greetings, small
 * talk about the day, requests for help, and the assistant's answers. It
 * shares everyday words with the questions (eat, work, live, morning, music…)
 * on purpose, as real conversation does, so a question's words alone do not
 * point at its evidence.
 */
import { pick, type Rng } from '../util/rng.js';

/** A line of chatter with the label of what it means (equal labels: same meaning). */
export interface ChatterLine {
  text: string;
  meaning: string;
}

type Slots = Record<string, readonly string[]>;

interface ChatterTemplate {
  id: string;
  texts: readonly string[];
  slots: Slots;
}

const SLOTS: Slots = {
  meal: ['breakfast', 'lunch', 'dinner', 'a late snack'],
  dish: ['pasta', 'a burrito', 'leftover pizza', 'a huge salad', 'ramen', 'pancakes', 'a sandwich', 'soup'],
  feeling: ['great', 'a bit much', 'surprisingly good', 'disappointing', 'exactly what I needed'],
  weather: ['grey and rainy', 'sunny for once', 'freezing', 'really windy', 'weirdly warm'],
  plan: ['clean the whole flat', 'visit a museum', 'go hiking', 'finally do my taxes', 'sleep in', 'try a new recipe'],
  show: ['a documentary about octopuses', 'a cooking show', 'an old sitcom', 'a true crime series', 'a nature film'],
  errand: ['groceries', 'a birthday present', 'new running shoes', 'light bulbs', 'a winter coat'],
  day: ['Friday', 'the weekend', 'tomorrow', 'Monday'],
  topic: [
    'saving money',
    'sleeping better',
    'staying focused',
    'cooking for one',
    'learning faster',
    'writing a CV',
    'packing light',
  ],
  thing: ['podcast', 'board game', 'houseplant', 'pasta recipe', 'laptop bag', 'budgeting app'],
  mood: ['tired', 'stressed', 'pretty happy', 'restless', 'calm'],
  who: ['mum', 'dad', 'best friend', 'neighbour', 'cousin', 'coworker'],
  news: ['a job offer', 'their holiday', 'a broken boiler', 'a new puppy', 'a wedding'],
};

const USER_CHATTER: readonly ChatterTemplate[] = [
  {
    id: 'meal',
    texts: ['Had {dish} for {meal} and it was {feeling}.', 'Made {dish} for {meal}, {feeling}.'],
    slots: { dish: SLOTS['dish']!, meal: SLOTS['meal']!, feeling: SLOTS['feeling']! },
  },
  {
    id: 'weather',
    texts: ["It's {weather} here today.", 'Weather update: {weather}.'],
    slots: { weather: SLOTS['weather']! },
  },
  {
    id: 'plan',
    texts: ["I think I'll {plan} this weekend.", 'Plan for Saturday: {plan}.'],
    slots: { plan: SLOTS['plan']! },
  },
  {
    id: 'show',
    texts: ['Watched {show} last night.', 'Ended up binging {show} yesterday.'],
    slots: { show: SLOTS['show']! },
  },
  {
    id: 'errand',
    texts: ['I need to buy {errand} before {day}.', 'Reminder to self: get {errand} by {day}.'],
    slots: { errand: SLOTS['errand']!, day: SLOTS['day']! },
  },
  {
    id: 'help',
    texts: ['Do you have any tips for {topic}?', 'Any advice on {topic}?', 'How do people get better at {topic}?'],
    slots: { topic: SLOTS['topic']! },
  },
  {
    id: 'recommend',
    texts: ['Can you recommend a good {thing}?', "What's a {thing} you'd suggest?"],
    slots: { thing: SLOTS['thing']! },
  },
  {
    id: 'mood',
    texts: ["Feeling {mood} today, don't know why.", "I'm {mood} this evening."],
    slots: { mood: SLOTS['mood']! },
  },
  {
    id: 'call',
    texts: ['My {who} called about {news}.', 'Long chat with my {who} today about {news}.'],
    slots: { who: SLOTS['who']!, news: SLOTS['news']! },
  },
  {
    id: 'work-day',
    texts: ['Work was {feeling} today, so many meetings.', 'The workday was {feeling}, glad it is over.'],
    slots: { feeling: SLOTS['feeling']! },
  },
  { id: 'morning', texts: ['Slow morning today, I stayed in bed too long.', 'This morning flew by.'], slots: {} },
  { id: 'thanks', texts: ['Thanks, that helps!', 'Cool, thank you.', 'Okay, good to know.'], slots: {} },
];

const GREETINGS: readonly string[] = [
  'Hey, how are you?',
  'Hi again!',
  'Good morning!',
  'Evening! Got a minute?',
  'Hello, me again.',
];
const ASSISTANT_GREETINGS: readonly string[] = [
  "Hi! Good to hear from you. What's on your mind?",
  'Hello! How can I help today?',
  "Hey! I'm here, go ahead.",
];

/** Assistant answers to a told fact: no echo of the fact (assistants rarely repeat it word for word). */
const ACKNOWLEDGEMENTS: readonly string[] = [
  "Thanks for telling me, I'll keep that in mind.",
  'Got it, noted.',
  "Good to know! I'll remember that.",
  'Understood.',
];

const ASSISTANT_REPLIES: Record<string, readonly string[]> = {
  meal: ['Sounds tasty! Do you cook often?', 'Food really can fix a day.'],
  weather: ['Hope it clears up for you.', 'Perfect excuse to stay in with a good book.'],
  plan: ['That sounds like a solid plan.', 'Nice, tell me how it goes!'],
  show: ['Was it any good?', 'I have heard good things about that one.'],
  errand: ["I'll remind you if you ask me later.", 'Maybe put it on a list so it does not slip.'],
  help: [
    'Start small, pick one habit, and stay consistent for a couple of weeks.',
    'Write down what you want to change, then plan one step for each day.',
    'Try a fixed routine and review it every Sunday.',
  ],
  recommend: [
    'It depends on your taste, but start with something popular and well reviewed.',
    'Ask a friend who shares your taste, and check reviews.',
  ],
  mood: ["That's okay, some days are like that.", 'Want to talk about it?'],
  call: ['How did that go?', 'Sounds like a lot happening for them.'],
  'work-day': ['Meetings can be draining. Take a proper break tonight.', 'Well done getting through it.'],
  morning: ['Slow mornings are sometimes what we need.', 'Those days happen!'],
  thanks: ['Anytime!', 'Happy to help.'],
};

function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? `{${k}}`);
}

/** Capitalises the first letter (templates may begin with a value). */
export function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A random line of user small talk. */
export function userChatter(rng: Rng): ChatterLine & { kind: string } {
  const template = pick(rng, USER_CHATTER);
  const values: Record<string, string> = {};
  for (const [k, options] of Object.entries(template.slots)) values[k] = pick(rng, options);
  const label = `${template.id}:${Object.keys(values)
    .sort()
    .map((k) => values[k])
    .join('|')}`;
  return { text: sentence(fill(pick(rng, template.texts), values)), meaning: label, kind: template.id };
}

/** The assistant's answer to a line of small talk of `kind`. */
export function assistantReply(rng: Rng, kind: string): ChatterLine {
  const options = ASSISTANT_REPLIES[kind] ?? ACKNOWLEDGEMENTS;
  const text = pick(rng, options);
  return { text, meaning: `reply:${text}` };
}

/** The assistant's answer to a told fact. */
export function acknowledgement(rng: Rng): ChatterLine {
  return { text: pick(rng, ACKNOWLEDGEMENTS), meaning: 'ack' };
}

/** A session's opening pair. */
export function greeting(rng: Rng): [ChatterLine, ChatterLine] {
  const hello = pick(rng, GREETINGS);
  const reply = pick(rng, ASSISTANT_GREETINGS);
  return [
    { text: hello, meaning: 'greeting' },
    { text: reply, meaning: 'greeting-reply' },
  ];
}

/** Relatives and friends a near-miss fact is about. */
export const OTHER_PEOPLE: readonly string[] = [
  'sister',
  'brother',
  'best friend',
  'coworker',
  'neighbour',
  'cousin',
  'dad',
  'mum',
];
