import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  adversarialQuestions,
  countedQuestions,
  evidenceIds,
  loadLocomo,
  locomoDir,
  LOCOMO_SPLITS,
} from '../../bench/eval/locomo.js';

/** A made-up conversation in LoCoMo's format (the real data is never in the repository). */
function conversation(id: string): { conversation: Record<string, unknown>; qa: unknown[] } {
  return {
    conversation: {
      speaker_a: 'Ada',
      speaker_b: 'Bo',
      session_1_date_time: '1:00 pm on 8 May, 2023',
      session_1: [
        { speaker: 'Ada', dia_id: 'D1:1', text: `Hi Bo! I adopted a puppy in town ${id}.` },
        {
          speaker: 'Bo',
          dia_id: 'D1:2',
          text: 'Congrats! What is its name?',
          img_url: ['x'],
          blip_caption: 'a photo of a dog',
        },
      ],
      session_2_date_time: '2:00 pm on 9 May, 2023',
      session_2: [
        { speaker: 'Ada', dia_id: 'D2:1', text: 'Her name is Pip.' },
        { speaker: 'Bo', dia_id: 'D2:2', text: 'Gotta run, bye!' },
      ],
      session_3_date_time: 'never held',
      session_3: [],
    },
    qa: [
      { question: 'What did Ada adopt?', answer: 'a puppy', evidence: ['D1:1'], category: 4 },
      { question: 'What is the puppy called?', answer: 'Pip', evidence: ['D1:1; D2:01'], category: 1 },
      { question: 'When did Ada adopt?', answer: 'May 2023', evidence: ['D:1:1', 'D'], category: 2 },
      { question: 'What did Bo adopt?', adversarial_answer: 'a puppy', evidence: ['D1:1'], category: 5 },
      { question: 'Nothing to find', answer: 'x', evidence: ['D9:9'], category: 3 },
    ],
  };
}

const ids = [...LOCOMO_SPLITS.tuning, ...LOCOMO_SPLITS['held-out']];
const root = mkdtempSync(join(tmpdir(), 'engram-locomo-'));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('LoCoMo loader', () => {
  it('evidenceIds() reads mistyped labels as the turn ids they mean and reports what it cannot read', () => {
    expect(evidenceIds(['D8:6; D9:17', 'D:11:26', 'D30:05', 'D', 'D4:4 D4:6'])).toEqual({
      ids: ['D8:6', 'D9:17', 'D11:26', 'D30:5', 'D4:4', 'D4:6'],
      unreadable: ['D'],
    });
    expect(evidenceIds(undefined)).toEqual({ ids: [], unreadable: [] });
  });

  it('loadLocomo() reads the release file: one scope per conversation, each turn "Speaker: text", questions with existing evidence only', () => {
    const dir = join(root, 'release');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'locomo10.json'),
      JSON.stringify(ids.map((id) => ({ sample_id: `conv-${id}`, ...conversation(id) }))),
    );
    const { dataset, audit } = loadLocomo(locomoDir(dir)!, 'held-out');
    expect(dataset.users.map((u) => u.userId)).toEqual(LOCOMO_SPLITS['held-out'].map((id) => `locomo-${id}`));
    const first = dataset.users[0]!;
    expect(first.sessions.map((s) => s.index)).toEqual([1, 2]);
    expect(first.sessions[0]!.turns.map((t) => [t.id, t.text])).toEqual([
      ['44/D1:1', 'Ada: Hi Bo! I adopted a puppy in town 44.'],
      ['44/D1:2', 'Bo: Congrats! What is its name?'],
    ]);
    // The same words with other punctuation mean the same (a merge of them by add() is right).
    expect(first.sessions[1]!.turns[1]!.meaning).toBe('bo gotta run bye');
    const questions = dataset.questions.filter((q) => q.userId === 'locomo-44');
    expect(questions.map((q) => q.evidence)).toEqual([['44/D1:1'], ['44/D1:1', '44/D2:1'], ['44/D1:1'], ['44/D1:1']]);
    expect(countedQuestions(questions).map((q) => q.text)).toEqual([
      'What did Ada adopt?',
      'What is the puppy called?',
      'When did Ada adopt?',
    ]);
    expect(adversarialQuestions(questions).map((q) => q.text)).toEqual(['What did Bo adopt?']);
    expect(audit).toMatchObject({ questions: 25, withoutEvidence: 5 });
    expect(audit.unknownLabels.filter((l) => l.startsWith('44/'))).toEqual(['44/D', '44/D9:9']);
  });

  it('loadLocomo() reads a folder of per-conversation files the same way', () => {
    const dir = join(root, 'files');
    mkdirSync(dir);
    for (const id of ids) {
      const { conversation: c, qa } = conversation(id);
      writeFileSync(join(dir, `${id}.json`), JSON.stringify({ ...c, qa }));
    }
    const release = loadLocomo(join(root, 'release'), 'tuning').dataset;
    const files = loadLocomo(locomoDir(dir)!, 'tuning').dataset;
    expect(files).toEqual(release);
    expect(files.users.map((u) => u.userId)).toEqual(['locomo-26', 'locomo-30', 'locomo-41', 'locomo-42', 'locomo-43']);
  });

  it('locomoDir() is undefined without a path, and explains how to get the data when the path holds none', () => {
    expect(locomoDir(undefined)).toBeUndefined();
    expect(() => locomoDir(join(root, 'nowhere'))).toThrow(/no such folder[\s\S]*snap-research\/locomo/);
    const empty = join(root, 'empty');
    mkdirSync(empty);
    expect(() => locomoDir(empty)).toThrow(/neither locomo10\.json[\s\S]*locomo10\.zip/);
  });
});
