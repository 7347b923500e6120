/**
 * The facts a simulated user tells an assistant over many sessions, and the
 * questions asked about them later. Two disjoint libraries: `TUNING_FACTS`
 * (weights and thresholds may be chosen on them) and `HELD_OUT_FACTS` (only
 * ever reported). Questions are written the way people ask, not the way the
 * fact was said: other words, other grammatical forms, contractions, and
 * never the value being asked for.
 *
 * Placeholders: `{v}` the value, `{old}` the value before a change.
 */

/** One kind of personal fact. */
export interface FactTemplate {
  /** Stable id (labels and split membership). */
  id: string;
  /** Values a user may have; one is drawn per user (and another on a change). */
  values: readonly string[];
  /** Ways the user first tells it or mentions it again. */
  state: readonly string[];
  /** Ways the user tells that it changed ({old} → {v}); absent for facts that do not change. */
  change?: readonly string[];
  /** Questions about the current value. */
  ask: readonly string[];
  /** Questions about the value before a change. */
  askBefore?: readonly string[];
  /** The same kind of fact about somebody else ({who} a relative or friend): a near miss. */
  others?: readonly string[];
}

/** Facts that tuning may look at. */
export const TUNING_FACTS: readonly FactTemplate[] = [
  {
    id: 'food-allergy',
    values: ['peanuts', 'shellfish', 'walnuts', 'sesame seeds', 'strawberries', 'eggs'],
    state: [
      "I'm allergic to {v}.",
      'Heads up for any recipe ideas: I have an allergy to {v}, it gets bad fast.',
      "Remember I can't go near {v}, I carry an EpiPen because of them.",
    ],
    ask: [
      'What can I not eat?',
      "Is there any food that's dangerous for me?",
      'What do I have to avoid when I order at a restaurant?',
      'Do I have any food allergies?',
    ],
    others: ['My {who} is allergic to {v}, so dinners at home are tricky.'],
  },
  {
    id: 'home-city',
    values: ['Porto', 'Lyon', 'Denver', 'Glasgow', 'Osaka', 'Tallinn', 'Valencia'],
    state: [
      'I live in {v}.',
      "Things are pretty quiet here in {v} this time of year, it's where I've been living for a while.",
      'My flat in {v} is tiny but I love the neighbourhood.',
    ],
    change: [
      'Big news: we moved from {old} to {v} last week!',
      "I've finally settled into my new place in {v}, leaving {old} was hard.",
    ],
    ask: ['Where am I based these days?', 'Which city do I call home?', "What's my current city?"],
    askBefore: ['Where did I live before I moved?', 'Which city did I leave behind?'],
    others: ['My {who} lives in {v} and keeps inviting me over.'],
  },
  {
    id: 'job',
    values: [
      'a nurse',
      'a software developer',
      'an accountant',
      'a high school teacher',
      'an electrician',
      'a graphic designer',
    ],
    state: [
      'I work as {v}.',
      "I've been {v} for about six years now.",
      'Long shift today, being {v} is exhausting some weeks.',
    ],
    change: [
      'I quit being {old} and started a new job as {v}!',
      'After years as {old}, I switched careers and now I work as {v}.',
    ],
    ask: ['What do I do for a living?', "What's my profession?", 'What kind of work am I in?'],
    askBefore: ['What was my job before the career change?', 'What did I used to do for work?'],
    others: ['My {who} works as {v} and loves it.'],
  },
  {
    id: 'pet',
    values: [
      'a golden retriever named Biscuit',
      'a tabby cat called Mochi',
      'two rabbits, Pip and Juniper',
      'a parrot named Kiwi',
      'a beagle called Rufus',
    ],
    state: [
      'I have {v}.',
      'Just got home and {v} was waiting at the door for me, best part of my day.',
      "I'm taking care of {v}, they're my whole world.",
    ],
    ask: ['What animal do I have at home?', 'Do I own any pets?', "What's the name of my pet?"],
    others: ['My {who} has {v}.'],
  },
  {
    id: 'partner',
    values: ['Daniel', 'Priya', 'Marco', 'Sofia', 'Tom', 'Leila'],
    state: [
      "My partner's name is {v}.",
      '{v} and I have been together for five years.',
      'Went for a long walk with {v} tonight, my other half always cheers me up.',
    ],
    ask: [
      "Who's my significant other?",
      'What is the name of the person I am dating?',
      'Who am I in a relationship with?',
    ],
  },
  {
    id: 'sport',
    values: ['rock climbing', 'swimming', 'tennis', 'yoga', 'cycling', 'boxing'],
    state: [
      'I do {v} three times a week.',
      "I'm really into {v}, it keeps me sane.",
      'Had an amazing {v} session this morning.',
    ],
    change: [
      "I've stopped doing {old}, my knee couldn't take it, so I picked up {v} instead.",
      'Gave up {old} and switched to {v} recently.',
    ],
    ask: ['How do I stay active?', 'What exercise am I into?', 'Which sport do I practise?'],
    askBefore: ['What workout did I give up?', 'Which sport did I quit?'],
    others: ['My {who} just started {v}.'],
  },
  {
    id: 'drink',
    values: ['black coffee', 'green tea', 'oat milk lattes', 'chai', 'espresso'],
    state: [
      "I can't start the day without {v}.",
      'My morning routine is basically {v} and the news.',
      'I drink way too much {v}.',
    ],
    change: ["I've cut out {old} completely, now it's only {v} for me.", 'Switched from {old} to {v} to sleep better.'],
    ask: ["What's my go-to morning beverage?", 'How do I take my caffeine?', 'What do I like to drink when I wake up?'],
    askBefore: ['What did I drink in the mornings before I switched?'],
  },
  {
    id: 'instrument',
    values: ['the piano', 'the violin', 'the guitar', 'the drums', 'the cello'],
    state: [
      "I've been learning to play {v}.",
      'Practised {v} for an hour tonight, my fingers hurt.',
      'I take {v} lessons on Saturdays.',
    ],
    ask: ['Which musical instrument am I learning?', 'What do I practise on the weekends?', 'Do I play any music?'],
    others: ['My {who} plays {v} in a band.'],
  },
  {
    id: 'birthday',
    values: ['March 3rd', 'July 19th', 'October 28th', 'January 11th', 'May 30th'],
    state: ['My birthday is on {v}.', "Don't forget, {v} is my birthday!", "I'm turning 35 on {v}."],
    ask: ['When was I born?', 'What date should you wish me many happy returns?', 'When do I celebrate getting older?'],
    others: ["My {who}'s birthday is {v}."],
  },
  {
    id: 'language',
    values: ['Japanese', 'Portuguese', 'German', 'Korean', 'Italian', 'Mandarin'],
    state: [
      "I'm learning {v} on an app every evening.",
      'Signed up for a {v} class at the community centre.',
      'My {v} is getting better, I understood a whole podcast today.',
    ],
    ask: [
      'Which foreign language am I studying?',
      'What language have I been trying to pick up?',
      'What am I studying in the evenings?',
    ],
    others: ['My {who} speaks fluent {v}.'],
  },
  {
    id: 'employer',
    values: ['a small bakery', 'a logistics company', 'the city hospital', 'a video game studio', 'a bank downtown'],
    state: [
      'I work at {v}.',
      'Everyone at {v} is lovely, I got lucky with my coworkers.',
      'The commute to {v} takes me forty minutes.',
    ],
    change: ["I handed in my notice at {old}, I'm joining {v} next month.", 'Left {old}; started at {v} on Monday.'],
    ask: ['Where am I employed?', 'Which company pays my salary?', 'Who do I work for?'],
    askBefore: ['Where was I working before I switched employers?'],
  },
  {
    id: 'diet',
    values: ['vegetarian', 'vegan', 'pescatarian', 'keto'],
    state: [
      "I'm {v}.",
      "I've been {v} for three years and honestly don't miss the old way of eating.",
      'I follow a {v} diet, so keep that in mind for recipes.',
    ],
    change: ['I stopped being {old}, I eat {v} now.', "After being {old} for ages, I've gone {v}."],
    ask: ['Do I eat meat?', 'What kind of eating plan do I follow?', 'Any restrictions on what I eat?'],
    askBefore: ['What diet did I follow before?'],
  },
  {
    id: 'commute',
    values: ['by bike', 'on the tram', 'by car', 'on foot', 'by train'],
    state: [
      'I get to work {v}.',
      'I go to the office {v} every day.',
      'Commuting {v} was rough this morning with the rain.',
    ],
    change: ["I don't go {old} anymore, I commute {v} now.", 'Switched from going {old} to going {v}.'],
    ask: ['How do I travel to my job?', "What's my daily way of getting to the office?", 'How do I get in to work?'],
    askBefore: ['How did I use to get to work?'],
  },
  {
    id: 'book-genre',
    values: ['science fiction', 'historical novels', 'crime thrillers', 'poetry', 'fantasy'],
    state: [
      'I mostly read {v}.',
      'Finished another one of my {v} last night, I read them before bed.',
      'My bookshelf is full of {v}.',
    ],
    ask: ['What sort of books do I enjoy?', 'What do I like reading?', 'Which genre do I pick up at the library?'],
    others: ['My {who} only reads {v}.'],
  },
  {
    id: 'sibling',
    values: [
      'an older brother, Luis',
      'a twin sister, Hannah',
      'a younger brother called Kenji',
      'two sisters, Maya and Ruth',
    ],
    state: ['I have {v}.', 'Talked to my sibling today. For context, I have {v}.', 'Growing up with {v} was chaotic.'],
    ask: ['Do I have any brothers or sisters?', 'Who are my siblings?', "What's the name of my brother or sister?"],
  },
  {
    id: 'car',
    values: ['an old Volvo', 'a red Mini', 'a Toyota hybrid', 'a second-hand Golf', 'an electric Kia'],
    state: [
      'I drive {v}.',
      "My car, {v}, broke down again, I'm sick of it.",
      'Took my car in for its service today, {v} needs new tyres.',
    ],
    change: ['Sold {old} and bought {v}!', 'Got rid of {old}; my new car is {v}.'],
    ask: ['What vehicle do I own?', "What's my ride?", 'Which car is parked in my driveway?'],
    askBefore: ['What car did I have before?'],
    others: ['My {who} drives {v}.'],
  },
  {
    id: 'cuisine',
    values: ['Thai food', 'Mexican food', 'sushi', 'Indian curries', 'Ethiopian food'],
    state: [
      '{v} is my absolute favourite.',
      'I could eat {v} every single day.',
      "We ordered {v} again, it's what I always crave.",
    ],
    ask: [
      'What do I love to eat most?',
      'If we go out for dinner, what would I pick?',
      "What's my favourite kind of meal?",
    ],
  },
  {
    id: 'gym-day',
    values: ['Mondays and Thursdays', 'every weekday at 6am', 'Tuesday evenings', 'weekends only'],
    state: [
      'I go to the gym {v}.',
      'My workout slots are {v}, so I keep those free.',
      "Gym {v} is the plan, I don't skip it.",
    ],
    ask: ['When do I work out?', 'On which days am I training?', 'What time do I exercise?'],
  },
];

/** Facts never looked at while tuning: the held-out benchmark. */
export const HELD_OUT_FACTS: readonly FactTemplate[] = [
  {
    id: 'medication',
    values: ['insulin', 'blood pressure pills', 'an asthma inhaler', 'thyroid tablets', 'antihistamines'],
    state: [
      'I take {v} every day.',
      "Remind me I'm running low on {v}, I need them daily.",
      'My doctor put me on {v} last year.',
    ],
    ask: [
      'What medicine am I on?',
      'Is there anything my doctor prescribed me?',
      'What do I need to refill at the pharmacy?',
    ],
    others: ['My {who} has to take {v}.'],
  },
  {
    id: 'hometown',
    values: ['a small village in Wales', 'Naples', 'rural Ohio', 'Krakow', 'a fishing town in Norway'],
    state: ['I grew up in {v}.', 'Back when I was a kid in {v}, summers lasted forever.', "I'm originally from {v}."],
    ask: ['Where was I raised?', 'Where did I spend my childhood?', "Where's my family originally from?"],
    others: ['My {who} grew up in {v} too.'],
  },
  {
    id: 'child',
    values: [
      'a daughter, Ella, who is four',
      'a son named Oscar, he just turned seven',
      'twin boys, Leo and Max',
      'a baby girl called Ines',
    ],
    state: [
      'I have {v}.',
      'Parenting update: I have {v} and they keep me busy.',
      "Being a parent is wild, I've got {v}.",
    ],
    ask: ['Do I have kids?', 'How many children have I got?', "What are my kids' names?"],
  },
  {
    id: 'band',
    values: ['Radiohead', 'Fleetwood Mac', 'Daft Punk', 'Arctic Monkeys', 'ABBA'],
    state: [
      '{v} is my favourite band.',
      "I've had {v} on repeat all week.",
      'Saw {v} live once and cried the whole time.',
    ],
    change: ["Honestly I'm over {old}, {v} is my favourite now.", 'New obsession: {v}. {old} had a good run.'],
    ask: ['What music do I listen to most?', "Who's my favourite group?", 'Which artists do I love?'],
    askBefore: ['Which band was I obsessed with earlier?'],
    others: ['My {who} is a huge {v} fan.'],
  },
  {
    id: 'trip',
    values: ['Iceland', 'Vietnam', 'Peru', 'Morocco', 'New Zealand', 'Greece'],
    state: [
      "I'm planning a trip to {v} in the autumn.",
      'Booked my flights to {v}!',
      'Researching hostels in {v} for my holiday.',
    ],
    change: [
      'Change of plans, the {old} trip is off, I am going to {v} instead.',
      'Cancelled {old}; booked {v} for my holiday now.',
    ],
    ask: ['Where am I going on vacation?', "What's my next travel destination?", 'Which country am I visiting soon?'],
    askBefore: ['Where was I originally going to travel?'],
    others: ['My {who} just got back from {v}.'],
  },
  {
    id: 'phone',
    values: ['an iPhone 12', 'a Pixel 8', 'a Samsung Galaxy', 'a Fairphone', 'an old Nokia'],
    state: [
      'I use {v}.',
      'The battery on my phone, {v}, dies by lunchtime.',
      'Dropped my phone today, {v}, and the screen cracked.',
    ],
    change: ['Upgraded from {old} to {v}.', 'Finally replaced {old}, I have {v} now.'],
    ask: ['What mobile do I have?', 'Which handset do I carry?', "What's my cell?"],
    askBefore: ['What phone did I have before?'],
  },
  {
    id: 'bedtime',
    values: ['around 10pm', 'after midnight', 'at 9:30 sharp', 'around 11'],
    state: [
      'I usually go to bed {v}.',
      "I'm a creature of habit, lights out {v}.",
      'Trying to keep sleeping {v} even on weekends.',
    ],
    ask: ['When do I go to sleep?', 'What time do I hit the sack?', "What's my bedtime?"],
  },
  {
    id: 'fear',
    values: ['heights', 'spiders', 'flying', 'deep water', 'crowds'],
    state: [
      "I'm terrified of {v}.",
      "Anything to do with {v} freaks me out, I can't help it.",
      'I have a real phobia of {v}.',
    ],
    ask: ['What am I scared of?', 'What makes me anxious?', 'Do I have any phobias?'],
    others: ['My {who} is afraid of {v}.'],
  },
  {
    id: 'dislike-food',
    values: ['cilantro', 'olives', 'mushrooms', 'blue cheese', 'raw onions'],
    state: [
      'I hate {v}.',
      "Please never suggest anything with {v}, I can't stand it.",
      'Anything with {v} in it is the worst, it ruins every dish.',
    ],
    ask: [
      "What foods don't I like?",
      'Is there an ingredient I refuse to eat?',
      'Which topping should you leave off my pizza?',
    ],
    others: ['My {who} loves {v}, which I find gross.'],
  },
  {
    id: 'degree',
    values: ['biology', 'architecture', 'economics', 'philosophy', 'mechanical engineering'],
    state: [
      'I studied {v} at university.',
      'My degree is in {v}, though I barely use it.',
      'Back in college I majored in {v}.',
    ],
    ask: ['What was my major?', 'What did I get my degree in?', 'What subject did I study in college?'],
    others: ['My {who} is studying {v}.'],
  },
  {
    id: 'volunteer',
    values: ['at an animal shelter', 'at a food bank', 'teaching kids to code', 'at the local library'],
    state: [
      'I volunteer {v} on Sundays.',
      'Spent the afternoon volunteering {v}, felt good.',
      'I help out {v} once a week.',
    ],
    ask: ['What charity work do I do?', 'How do I give back to the community?', 'Where do I help out for free?'],
  },
  {
    id: 'garden',
    values: ['tomatoes', 'herbs on the balcony', 'roses', 'chillies', 'succulents'],
    state: ["I'm growing {v}.", 'My {v} are finally doing well this year.', 'Spent Saturday repotting my {v}.'],
    ask: ['What plants do I grow?', 'What am I cultivating at home?', "What's in my garden?"],
  },
  {
    id: 'saving-goal',
    values: ['a house deposit', 'a new laptop', 'a trip around Asia', 'an electric bike', 'a wedding'],
    state: [
      "I'm saving up for {v}.",
      'Putting money aside every month for {v}.',
      'No takeaways this month, I need to save for {v}.',
    ],
    change: [
      'I bought what I was saving for, so now the money goes towards {v} instead of {old}.',
      "Dropped the plan for {old}; I'm putting money into {v} now.",
    ],
    ask: [
      'What am I putting money aside for?',
      "What's my financial goal right now?",
      'Why am I cutting back on spending?',
    ],
    askBefore: ['What was I saving for earlier?'],
  },
  {
    id: 'neighbourhood',
    values: [
      'a third-floor walk-up',
      'a house with a big garden',
      'a studio above a café',
      'a shared flat with three roommates',
    ],
    state: ['I live in {v}.', 'Home for me is {v}.', 'Carrying groceries up to {v} is my daily workout.'],
    change: ['Moved out of {old}; I now live in {v}.', 'Left {old} behind, my new home is {v}.'],
    ask: ['What kind of place do I live in?', "What's my apartment like?", 'Describe my home.'],
    askBefore: ['What was my previous home like?'],
  },
  {
    id: 'running',
    values: ['a half marathon in May', 'my first 10k', 'the Berlin marathon', 'a trail ultra'],
    state: [
      "I'm training for {v}.",
      'Long run today, getting ready for {v}.',
      'Signed up for {v}, nervous but excited.',
    ],
    ask: ['What race am I preparing for?', 'What am I getting fit for?', 'Which running event did I enter?'],
    others: ['My {who} is running {v}.'],
  },
  {
    id: 'film-genre',
    values: ['horror films', 'romantic comedies', 'documentaries', 'old westerns', 'anime'],
    state: ['I love {v}.', 'Friday nights are for {v} on the couch.', "Can't get enough of {v}."],
    ask: ['What do I like to watch?', 'What movies should you recommend me?', 'Which kind of film do I enjoy?'],
  },
  {
    id: 'workplace',
    values: ['from home', 'in a co-working space', 'at the head office downtown', 'in a lab on campus'],
    state: ['I work {v}.', 'My days are spent {v}.', 'Working {v} again today.'],
    change: ["I don't work {old} anymore; now I work {v}.", 'New setup: no more working {old}, I am {v} now.'],
    ask: ['Where do I do my job from?', "What's my office situation?", 'Do I go into an office?'],
    askBefore: ['Where did I use to work from?'],
  },
  {
    id: 'wake-up',
    values: ['at 5:30', 'at 7', 'around 8:30', 'at noon on weekends'],
    state: ['I get up {v}.', 'Alarm goes off {v} every day.', 'Up {v} as usual, coffee first.'],
    ask: ['When does my day begin?', 'What time do I rise?', 'How early am I up in the morning?'],
  },
];
