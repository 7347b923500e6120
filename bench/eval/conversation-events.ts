/**
 * The events two friends tell each other over many chat sessions, modelled on
 * LoCoMo-style conversations: people, places, objects and dates. Questions name
 * the speaker and reuse the event's own rare words (the pottery class, the
 * camping trip) but ask for what the evidence says (where, what, who, when),
 * in question form. Two disjoint libraries: `TUNING_EVENTS` (fusion weights and
 * thresholds may be chosen on them) and `HELD_OUT_EVENTS` (only reported).
 *
 * Placeholders: `{slot}` a value of the event, `{old}` a slot's value before a
 * change, `{when}` a time phrase ("yesterday"), `{name}` the speaker asked
 * about, `{friend}` the other speaker.
 */

/** One kind of event a speaker lives through and talks about. */
export interface EventTemplate {
  /** Stable id (labels and split membership). */
  id: string;
  /** Values of the event's slots; one per slot is drawn for a speaker. */
  slots: Readonly<Record<string, readonly string[]>>;
  /** Said before it happens (a plan): shares the event's words, states none of its slots. */
  plan: readonly string[];
  /** Ways the speaker first tells it happened; `{when}` and every slot in each one. */
  tell: readonly string[];
  /** Later mentions in other sessions; the slots each states are the placeholders it has. */
  again: readonly string[];
  /** A slot that changes later, and how the change is told ({old} → {slot}). */
  change?: { slot: string; forms: readonly string[] };
  /** The friend's answer to the telling: echoes a word or two, states nothing. */
  reply: readonly string[];
  /** Questions per slot (`when`: when it happened); `{name}` the speaker, other slots' placeholders their values (never the slot asked). */
  ask: Readonly<Record<string, readonly string[]>>;
  /** Questions about a slot's value before its change. */
  askBefore?: readonly string[];
}

/** Events tuning may look at. */
export const TUNING_EVENTS: readonly EventTemplate[] = [
  {
    id: 'pottery',
    slots: {
      item: [
        'a lopsided blue bowl',
        'a set of espresso cups',
        'a little vase for tulips',
        'a clay plate with fish on it',
      ],
      studio: ['Mudworks studio', 'the Kiln Collective', 'the community arts centre'],
    },
    plan: [
      "I've been thinking about trying a pottery class, my hands need something to do.",
      'Someone at work said pottery is great for stress, might sign up.',
    ],
    tell: [
      'I went to my first pottery class at {studio} {when} and made {item}!',
      'Pottery at {studio} {when} was so calming. I came home with {item}.',
    ],
    again: [
      '{item} from pottery is sitting on my desk now, wonky but mine.',
      'Still going to pottery at {studio}, the teacher is lovely.',
    ],
    reply: [
      'Pottery sounds so relaxing, {name}! Show me a picture sometime.',
      'That is so cool, I have always wanted to try pottery.',
    ],
    ask: {
      item: ['What did {name} make in the pottery class at {studio}?', 'What did {name} bring home from pottery?'],
      studio: ['Where did {name} make {item} in a pottery class?', 'Which studio does {name} go to for pottery?'],
      when: ['When did {name} go to a pottery class for the first time?', 'When did {name} make {item} at pottery?'],
    },
  },
  {
    id: 'camping',
    slots: {
      place: ['Lake Tahoe', 'the Redwood forest', 'a beach near Big Sur', 'the Smoky Mountains'],
      companion: ['my kids', 'my cousin Ray', 'two friends from college', 'my dad'],
    },
    plan: [
      'Thinking about a camping weekend soon, just need to find the tent.',
      'I miss camping, we have not gone in years.',
    ],
    tell: [
      'We went camping at {place} {when}, me and {companion}. We roasted marshmallows and saw the stars.',
      'Just back from camping at {place} with {companion} {when}, I still smell like campfire.',
    ],
    again: [
      'I keep looking at the photos from {place}, that camping trip was magic.',
      '{companion} keeps asking when we go camping again.',
    ],
    reply: ['Camping under the stars sounds amazing, {name}!', 'I love campfires, did you sleep in a tent?'],
    ask: {
      place: ['Where did {name} go camping with {companion}?', 'Where did {name} go camping?'],
      companion: ['Who went camping with {name} at {place}?'],
      when: ['When did {name} go camping at {place}?', 'When did {name} go camping?'],
    },
  },
  {
    id: 'adoption',
    slots: {
      pet: [
        'a shepherd mix called Luna',
        'a grey kitten named Pebble',
        'an old greyhound called Duke',
        'a rescue rabbit named Clover',
      ],
      shelter: ['the Westside shelter', 'Paws and Whiskers rescue', 'a farm upstate'],
    },
    plan: [
      'I have been browsing adoption websites every night, I really want a pet.',
      'My landlord finally said pets are allowed!',
    ],
    tell: [
      'I adopted {pet} from {shelter} {when}! I am in love.',
      'Big news: {when} I brought home {pet}, adopted from {shelter}.',
    ],
    again: ['{pet} chewed my slippers again, still worth it.', 'Took {pet} to the vet for a check-up, all healthy.'],
    reply: ['Congratulations on the adoption, {name}! Pets make a home.', 'Aww, adopting is the best. Send pictures!'],
    ask: {
      pet: ['What pet did {name} adopt from {shelter}?', 'What is the name of the animal {name} adopted?'],
      shelter: ['Where did {name} adopt {pet} from?'],
      when: ['When did {name} adopt {pet}?', 'When did {name} adopt a pet?'],
    },
  },
  {
    id: 'charity-run',
    slots: {
      cause: ['a children’s hospital', 'cancer research', 'the local homeless shelter', 'mental health support'],
      distance: ['5k', '10k', 'half marathon'],
    },
    plan: ['I signed up for a charity run, I should start training.', 'Do you think I can run a race? My legs say no.'],
    tell: [
      'I ran the {distance} charity race {when} to raise money for {cause}. Finished without walking!',
      '{when} I did the {distance} charity run for {cause}, my legs are dead but my heart is full.',
    ],
    again: [
      'We raised over a thousand dollars for {cause} with that run.',
      'My medal from the {distance} is hanging by the door.',
    ],
    reply: [
      'Running for charity, that is so inspiring, {name}!',
      'Wow, a charity race! How did you feel at the finish?',
    ],
    ask: {
      cause: [
        'What cause did {name} run the {distance} charity race for?',
        'Who did {name} raise money for with the charity run?',
      ],
      distance: ['How long was the charity run {name} did for {cause}?'],
      when: ['When did {name} run the charity race for {cause}?'],
    },
  },
  {
    id: 'painting',
    slots: {
      subject: ['a sunset over the harbour', 'sunflowers in a jar', 'my grandmother’s house', 'a fox in the snow'],
      medium: ['watercolours', 'oil paints', 'acrylics'],
    },
    plan: [
      'I bought a sketchbook, maybe I will get back into art.',
      'I want to paint again, I used to love it as a teenager.',
    ],
    tell: [
      'I finished a painting {when}! It is {subject}, done in {medium}.',
      'Spent all of {when} painting {subject} with {medium}, I am weirdly proud.',
    ],
    again: [
      'The painting of {subject} is framed in the hallway now.',
      'I am still experimenting with {medium}, they are tricky.',
    ],
    reply: ['I would love to see your painting, {name}!', 'You are so artistic, I can barely draw a stick figure.'],
    ask: {
      subject: ['What did {name} paint with {medium}?', 'What is in the painting {name} finished?'],
      medium: ['What kind of paint did {name} use for the painting of {subject}?'],
      when: ['When did {name} finish painting {subject}?', 'When did {name} finish the painting?'],
    },
  },
  {
    id: 'job',
    slots: {
      employer: ['a vet clinic', 'the public library', 'a design agency', 'a bike repair shop', 'a recording studio'],
    },
    plan: ['I have a job interview coming up and I am so nervous.', 'Job hunting is exhausting, so many applications.'],
    tell: [
      'I got the job at {employer}! I found out {when}.',
      'Starting at {employer} next week, they called me {when} with the offer.',
    ],
    again: ['First month at {employer} done, I like the people.', 'Long shift at {employer} today, my feet hurt.'],
    change: {
      slot: 'employer',
      forms: [
        'I left {old} and started at {employer}, it was time for a change.',
        'Quick update: no more {old}, I work at {employer} now.',
      ],
    },
    reply: ['Congrats on the new job, {name}! You deserve it.', 'A new job, how exciting! When do you start?'],
    ask: {
      employer: ['Where does {name} work now?', 'What is the new job {name} got?'],
      when: ['When did {name} get the job offer from {employer}?', 'When did {name} get the job offer?'],
    },
    askBefore: ['Where did {name} work before switching jobs?'],
  },
  {
    id: 'concert',
    slots: {
      artist: ['Florence and the Machine', 'Coldplay', 'a jazz trio from New Orleans', 'Billie Eilish'],
      venue: ['the Hollywood Bowl', 'a tiny club downtown', 'Madison Square Garden'],
    },
    plan: ['Tickets for a concert went on sale today, I am refreshing the page like crazy.'],
    tell: [
      'I saw {artist} live at {venue} {when}, I screamed every song.',
      'The {artist} concert at {venue} {when} was unreal, best night of the year.',
    ],
    again: [
      'I still have {artist} stuck in my head since the show.',
      'I bought a {artist} t-shirt at the show and wear it constantly.',
    ],
    reply: ['A concert, lucky you, {name}! Was the crowd wild?', 'Live music is the best, I need to go to more shows.'],
    ask: {
      artist: ['Which musician did {name} see in concert at {venue}?', 'Who did {name} see live?'],
      venue: ['Where did {name} see {artist} live?'],
      when: ['When did {name} go to the {artist} concert?'],
    },
  },
  {
    id: 'kids-school',
    slots: {
      child: ['my son Eli', 'my daughter Rosa', 'my youngest, Nico'],
      play: ['a tree in the school play', 'the narrator in the spring show', 'a pirate in the class musical'],
    },
    plan: ['The school has a performance coming up and the costume is on me, help.'],
    tell: [
      '{child} was {play} {when}, I cried in the front row.',
      'School show {when}: {child} played {play} and did not forget a single line.',
    ],
    again: [
      '{child} still talks about being {play}, wants to be an actor now.',
      'I put the video of {child} on stage on the family chat.',
    ],
    reply: ['School plays are the cutest, {name}!', 'Aww, your kid on stage! Did you record it?'],
    ask: {
      child: ["Which of {name}'s kids played {play}?"],
      play: ["What role did {name}'s child have in the school play?"],
      when: ["When was {name}'s kid in the school play?", 'When did {name} see {child} on stage?'],
    },
  },
  {
    id: 'road-trip',
    slots: {
      route: ['the Pacific Coast Highway', 'Route 66', 'the Scottish Highlands', 'the Icefields Parkway'],
      car: ['a rented camper van', 'my old Subaru', 'a convertible'],
    },
    plan: ['I am dreaming of a long road trip, just driving with no plan.'],
    tell: [
      'We drove {route} in {car} {when}, the views were ridiculous.',
      'Road trip done! {when} we finished {route} in {car}.',
    ],
    again: ['I made a photo album from our road trip on {route}.', '{car} survived the road trip, barely.'],
    reply: ['A road trip, that sounds like freedom, {name}!', 'I love road trips, did you pick good music?'],
    ask: {
      route: ['Where did {name} go on the road trip in {car}?', 'Which road did {name} drive on the trip?'],
      car: ['What did {name} drive on the road trip along {route}?'],
      when: ['When did {name} finish the road trip on {route}?'],
    },
  },
  {
    id: 'baking',
    slots: {
      bake: ['a lemon drizzle cake', 'sourdough bread', 'cinnamon rolls', 'a three-layer chocolate cake'],
      occasion: ['my mum’s birthday', 'the office bake sale', 'a neighbour’s housewarming'],
    },
    plan: ['I want to bake something for the weekend, any ideas?'],
    tell: [
      'I baked {bake} for {occasion} {when}, it disappeared in ten minutes.',
      '{when} I made {bake} for {occasion}, my kitchen is a disaster.',
    ],
    again: ['Everyone keeps asking for the recipe of {bake}.', 'Baking {bake} again this weekend, I am hooked.'],
    reply: ['Baking is such a nice hobby, {name}. Save me a slice!', 'Yum, I wish I could bake like that.'],
    ask: {
      bake: ['What did {name} bake for {occasion}?', 'What did {name} bake?'],
      occasion: ['Who or what did {name} bake {bake} for?'],
      when: ['When did {name} bake for {occasion}?'],
    },
  },
  {
    id: 'hiking-injury',
    slots: {
      injury: ['a sprained ankle', 'a broken wrist', 'a twisted knee'],
      trail: ['Mount Rainier', 'the Appalachian Trail', 'Angel’s Landing'],
    },
    plan: ['Going hiking next weekend if the weather holds.'],
    tell: [
      'Bad news, I fell hiking on {trail} {when} and got {injury}.',
      'Hiking {trail} {when} ended in the ER, {injury}. Ugh.',
    ],
    again: ['The doctor says {injury} needs six more weeks.', 'Still limping from {trail}, no hiking for a while.'],
    reply: ['Oh no, {name}, that sounds painful! Rest up.', 'Hiking accidents are scary, glad you are okay.'],
    ask: {
      injury: ['What injury did {name} get while hiking on {trail}?', 'What injury did {name} get while hiking?'],
      trail: ['Where did {name} get {injury} hiking?'],
      when: ['When did {name} get injured hiking on {trail}?'],
    },
  },
  {
    id: 'home',
    slots: {
      home: ['a flat in Brooklyn', 'a cottage near the river', 'a townhouse in Oakland', 'an apartment above a bakery'],
    },
    plan: ['The lease is up soon, I am looking at places.'],
    tell: ['We moved into {home} {when}! Boxes everywhere.', 'Signed the lease {when}, our new home is {home}.'],
    again: [
      'Hanging pictures in {home}, it finally feels like ours.',
      'The new neighbours brought us cookies, {home} already feels friendly.',
    ],
    change: {
      slot: 'home',
      forms: ['We moved out of {old}, we live in {home} now.', 'Goodbye {old}, hello {home}! Moving day was chaos.'],
    },
    reply: ['A new home, congrats {name}! Housewarming party?', 'Moving is so stressful, I hope it went smoothly.'],
    ask: {
      home: ['Where does {name} live now?', 'What is the new home of {name}?'],
      when: ['When did {name} move?', 'When did {name} sign the lease?'],
    },
    askBefore: ['Where did {name} live before moving?'],
  },
];

/** Events never looked at while tuning: the held-out half. */
export const HELD_OUT_EVENTS: readonly EventTemplate[] = [
  {
    id: 'support-group',
    slots: {
      group: ['an LGBTQ support group', 'a grief support circle', 'a new parents group', 'a sobriety meeting'],
      place: ['the community centre', 'a church hall on Fifth', 'the public library'],
    },
    plan: ['I have been meaning to find a support group, talking helps.'],
    tell: [
      'I went to {group} at {place} {when}, it was so powerful hearing everyone.',
      '{when} I finally went to {group} at {place}. I felt accepted.',
    ],
    again: ['Going back to {group} this week, those people get it.', 'The folks at {place} have become like family.'],
    reply: ['That takes courage, {name}. I am proud of you.', 'Support groups can really help, I am glad you went.'],
    ask: {
      group: ['What support group did {name} attend at {place}?', 'What support group did {name} go to?'],
      place: ['Where does {name} go to {group}?'],
      when: ['When did {name} go to {group}?'],
    },
  },
  {
    id: 'marathon-volunteer',
    slots: {
      task: ['handing out water', 'cheering at mile twenty', 'giving out medals at the finish'],
      race: ['the city marathon', 'the Boston marathon', 'a trail race'],
    },
    plan: ['They need volunteers for a race, I might help out.'],
    tell: ['I volunteered at {race} {when}, I was {task}.', 'Spent {when} volunteering at {race}, {task} for hours.'],
    again: ['Volunteering at {race} made me want to run one myself.'],
    reply: [
      'Volunteering is so kind, {name}! The runners must have loved you.',
      'That sounds fun, races have such good energy.',
    ],
    ask: {
      task: ['What did {name} do as a volunteer at {race}?'],
      race: ['Which race did {name} volunteer at?'],
      when: ['When did {name} volunteer at {race}?'],
    },
  },
  {
    id: 'instrument',
    slots: {
      instrument: ['the ukulele', 'the cello', 'the saxophone', 'the drums'],
      teacher: ['a retired jazz player named Walt', 'my neighbour Mrs. Okafor', 'an online teacher from Lisbon'],
    },
    plan: ['I want to learn an instrument this year, something new.'],
    tell: [
      'I started learning {instrument} {when}! My teacher is {teacher}.',
      'First {instrument} lesson {when} with {teacher}, my fingers hurt.',
    ],
    again: ['Practising {instrument} every night, the neighbours are patient.', '{teacher} says I am improving fast.'],
    reply: ['Learning music is so good for the brain, {name}!', 'Play me something next time we meet!'],
    ask: {
      instrument: ['What instrument is {name} learning with {teacher}?', 'What instrument is {name} learning?'],
      teacher: ['Who teaches {name} {instrument}?'],
      when: ['When did {name} start {instrument} lessons?'],
    },
  },
  {
    id: 'wedding',
    slots: {
      couple: ['my cousin Lena and her fiancé', 'my college roommate Jess', 'my brother Theo'],
      place: ['a vineyard in Napa', 'a barn in Vermont', 'a beach in Cancun'],
    },
    plan: ['I need a dress for a wedding and I hate shopping.'],
    tell: [
      'We went to the wedding of {couple} at {place} {when}, I danced all night.',
      '{when} was the wedding, {couple} got married at {place}. So beautiful.',
    ],
    again: [
      'Still recovering from that wedding, {place} was a dream.',
      'The photos from the wedding of {couple} just came in.',
    ],
    reply: ['Weddings are the best, {name}! Did you catch the bouquet?', 'That sounds lovely, I cry at every wedding.'],
    ask: {
      couple: ['Whose wedding did {name} go to at {place}?'],
      place: ['Where was the wedding of {couple} that {name} attended?'],
      when: ['When did {name} go to the wedding at {place}?'],
    },
  },
  {
    id: 'garden',
    slots: {
      crop: ['tomatoes and basil', 'strawberries', 'pumpkins', 'a row of sunflowers'],
      plot: ['a community garden plot', 'our backyard', 'the balcony'],
    },
    plan: ['I bought seeds today, wish me luck.'],
    tell: [
      'I planted {crop} in {plot} {when}, fingers crossed.',
      '{when} I spent the whole day planting {crop} in {plot}.',
    ],
    again: ['The {crop} are finally sprouting!', 'Watering {plot} every evening, it is my quiet time.'],
    reply: [
      'Gardening is so peaceful, {name}. I kill every plant I touch.',
      'Fresh food from your own garden, amazing!',
    ],
    ask: {
      crop: ['What did {name} plant in {plot}?', 'What did {name} plant in the garden?'],
      plot: ['Where is {name} growing {crop}?'],
      when: ['When did {name} plant {crop}?'],
    },
  },
  {
    id: 'course',
    slots: {
      subject: ['counselling', 'web development', 'nursing', 'photography'],
      school: ['the community college', 'an online bootcamp', 'the university downtown'],
    },
    plan: ['I keep thinking about going back to school.'],
    tell: [
      'I enrolled in a {subject} course at {school} {when}!',
      'It is official, {when} I signed up to study {subject} at {school}.',
    ],
    again: ['My {subject} classes are tough but I love them.', 'Exams at {school} next week, pray for me.'],
    change: {
      slot: 'subject',
      forms: ['I switched from {old} to {subject}, it fits me better.', 'Dropped {old}; I am studying {subject} now.'],
    },
    reply: ['Going back to school is brave, {name}!', 'That is a great step, what made you decide?'],
    ask: {
      subject: ['What is {name} studying at {school}?', 'What course is {name} taking now?'],
      school: ['Where is {name} studying {subject}?'],
      when: ['When did {name} enroll in the course at {school}?'],
    },
    askBefore: ['What was {name} studying before switching?'],
  },
  {
    id: 'festival',
    slots: {
      festival: ['a lantern festival', 'a food truck festival', 'the pride parade', 'a folk music festival'],
      with: ['my sister', 'the kids', 'my coworkers'],
    },
    plan: ['There is a festival in town soon, we should go.'],
    tell: [
      'We went to {festival} {when} with {with}, so many colours.',
      '{festival} {when} was packed, I went with {with} and we stayed until midnight.',
    ],
    again: ['Still have my wristband from {festival}.', '{with} want to go to {festival} again next year.'],
    reply: ['Festivals are so much fun, {name}!', 'Sounds like a great day out.'],
    ask: {
      festival: ['What festival did {name} go to with {with}?'],
      with: ['Who did {name} go to {festival} with?'],
      when: ['When did {name} go to {festival}?'],
    },
  },
  {
    id: 'car-accident',
    slots: {
      car: ['my old Honda', 'the family minivan', 'my brand new Jeep'],
      place: ['a parking lot at the mall', 'the highway exit', 'the school drop-off'],
    },
    plan: ['My car is making a weird noise, I should get it checked.'],
    tell: [
      'Someone backed into {car} at {place} {when}, nobody hurt but ugh.',
      'Had a little accident {when}, {car} got dented at {place}.',
    ],
    again: ['{car} is still at the body shop after the accident.', 'Insurance is finally paying for {car}.'],
    reply: ['Oh no, {name}! Glad you are okay.', 'Car accidents are so scary, even small ones.'],
    ask: {
      car: ['Which car was damaged in the accident {name} had at {place}?'],
      place: ['Where did {name} have the accident with {car}?'],
      when: ['When did {name} have the car accident at {place}?'],
    },
  },
  {
    id: 'book-club',
    slots: {
      book: ['Becoming by Michelle Obama', 'The Night Circus', 'Educated by Tara Westover', 'Circe'],
      club: ['my book club', 'a reading group at work'],
    },
    plan: ['I need a good book to read, I am in a slump.'],
    tell: [
      'I finished {book} {when} for {club}, could not put it down.',
      '{when} {club} discussed {book}, we argued for two hours.',
    ],
    again: ['I keep recommending {book} to everyone.', 'Next pick for {club} is due soon.'],
    reply: ['I love a good book, {name}. Was the ending good?', 'Book clubs are so fun, I should join one.'],
    ask: {
      book: ['What book did {name} read with {club}?', 'Which book did {name} finish?'],
      club: ['Who did {name} read {book} with?'],
      when: ['When did {name} finish reading {book}?'],
    },
  },
  {
    id: 'surprise-party',
    slots: {
      guest: ['my husband', 'my best friend Mia', 'my dad, for his sixtieth'],
      place: ['a rooftop bar', 'our living room', 'a bowling alley'],
    },
    plan: ['Planning something secret, cannot say more yet!'],
    tell: [
      'We threw a surprise party for {guest} at {place} {when}, they had no idea.',
      '{when} was the surprise party for {guest} at {place}, total success.',
    ],
    again: [
      '{guest} is still talking about the surprise party.',
      'Cleaning up after the party took forever, {place} was a mess.',
    ],
    reply: ['A surprise party, how sweet, {name}!', 'I love surprises, were they shocked?'],
    ask: {
      guest: ['Who was the surprise party {name} threw at {place} for?'],
      place: ['Where did {name} hold the surprise party for {guest}?'],
      when: ['When did {name} throw the surprise party for {guest}?'],
    },
  },
  {
    id: 'trip',
    slots: {
      country: ['Japan', 'Portugal', 'Costa Rica', 'Norway'],
      highlight: [
        'a cooking class in a farmhouse',
        'whale watching',
        'a hot air balloon ride',
        'a night hike to a volcano',
      ],
    },
    plan: ['I really need a vacation, somewhere far away.'],
    tell: [
      'Just got back from {country} {when}! The highlight was {highlight}.',
      'Our trip to {country} ended {when}, and {highlight} was the best part.',
    ],
    again: [
      'I miss {country} already, the food was incredible.',
      'Telling everyone about {highlight}, sorry not sorry.',
    ],
    reply: ['Welcome back, {name}! Show me the photos.', 'Travelling is the best, where to next?'],
    ask: {
      country: ['Which country did {name} visit on the trip with {highlight}?', 'Which country did {name} visit?'],
      highlight: ['What was the best part of the trip to {country} for {name}?'],
      when: ['When did {name} get back from {country}?'],
    },
  },
  {
    id: 'family-pet',
    slots: {
      pet: [
        'a puppy named Bailey',
        'two goldfish, Salt and Pepper',
        'a parrot called Mango',
        'a guinea pig named Waffles',
      ],
    },
    plan: ['The kids are begging for a pet, I am close to giving in.'],
    tell: [
      'We got {pet} {when}, the kids are over the moon.',
      'Meet the newest family member: {pet}, home since {when}.',
    ],
    again: ['{pet} woke everyone up at 5am, typical.', 'The kids fight over who feeds {pet}.'],
    change: {
      slot: 'pet',
      forms: [
        'Sadly {old} passed away, but we just adopted {pet}.',
        'After losing {old}, we welcomed {pet} into the family.',
      ],
    },
    reply: ['A new pet, that is so exciting, {name}!', 'The kids must be thrilled!'],
    ask: {
      pet: ['What pet does the family of {name} have?', 'What is the name of the pet {name} got?'],
      when: ['When did {name} get {pet}?'],
    },
    askBefore: ['What pet did {name} have before?'],
  },
];

/** First names of the speakers, per half (no name in both). */
export const TUNING_NAMES: readonly string[] = [
  'Caroline',
  'Melanie',
  'Jon',
  'Gina',
  'Audrey',
  'Andrew',
  'Deborah',
  'Evan',
  'Tim',
  'John',
  'Maria',
  'Joanna',
  'Nate',
  'Calvin',
  'Dave',
  'Sam',
];
export const HELD_OUT_NAMES: readonly string[] = [
  'Tasha',
  'Priya',
  'Omar',
  'Bea',
  'Hector',
  'Lucia',
  'Ravi',
  'Greta',
  'Kofi',
  'Yuki',
  'Ingrid',
  'Mateo',
  'Ada',
  'Felix',
  'Noor',
  'Wes',
];

/** Time phrases of a telling. */
export const WHEN: readonly string[] = [
  'yesterday',
  'last weekend',
  'last Saturday',
  'on Sunday',
  'this morning',
  'last Friday night',
  'two days ago',
];
