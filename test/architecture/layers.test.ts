// The layer rule of ARCHITECTURE.md, checked on probe files: an arrow up fails
// lint, an arrow down or an `import type` passes.
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: eslint.config.js is plain JavaScript without declarations
import { layerRules } from '../../eslint.config.js';

async function problems(filePath: string, code: string): Promise<string[]> {
  const eslint = new ESLint({
    cwd: process.cwd(),
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { '@typescript-eslint': tseslint.plugin },
      },
      ...(layerRules as object[]),
    ],
  });
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => m.message);
}

describe('layer rule', () => {
  it('lint fails when a part imports the engine, a face, the facade or the door', async () => {
    expect(
      await problems(
        'lib/store/probe.ts',
        "import { EngineStore } from '../engine/engine-store.js';\nexport const x = EngineStore;\n",
      ),
    ).toHaveLength(1);
    expect(
      await problems(
        'lib/search/probe.ts',
        "import { Conversation } from '../memory/conversation.js';\nexport const x = Conversation;\n",
      ),
    ).toHaveLength(1);
    expect(
      await problems('lib/engine/probe.ts', "import { Engram } from '../engram.js';\nexport const x = Engram;\n"),
    ).toHaveLength(1);
    expect(
      await problems('lib/memory/probe.ts', "import { Engram } from '../index.js';\nexport const x = Engram;\n"),
    ).toHaveLength(1);
  });

  it('lint fails when the facade imports an agent helper', async () => {
    const found = await problems(
      'lib/engram.ts',
      "import { AgentTools } from './agent/tools.js';\nexport const x = AgentTools;\n",
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toContain('lib/agent/');
  });

  it('lint fails when anything but the quarantine file imports the hnswlib module or the Qdrant client', async () => {
    expect(
      await problems(
        'lib/vector/hnsw-index.ts',
        "import loadHnswlib from './native/hnswlib.js';\nexport const x = loadHnswlib;\n",
      ),
    ).toHaveLength(1);
    expect(
      await problems('lib/engine/probe.ts', "import * as q from '@qdrant/js-client-rest';\nexport const x = q;\n"),
    ).toHaveLength(1);
  });

  it('lint fails when the core imports an adapter or its framework, or an adapter reaches below the agent layer or into another adapter', async () => {
    // The frameworks are optional peers: nothing outside their adapter may import them, not even a type.
    expect(await problems('lib/engine/probe.ts', "import { tool } from 'ai';\nexport const x = tool;\n")).toHaveLength(
      1,
    );
    expect(
      await problems('lib/agent/probe.ts', "import type { Tool } from 'ai';\nexport type X = Tool;\n"),
    ).toHaveLength(1);
    expect(
      await problems(
        'lib/agent/probe.ts',
        "import type { LanguageModelV3 } from '@ai-sdk/provider';\nexport type X = LanguageModelV3;\n",
      ),
    ).toHaveLength(1);
    expect(
      await problems(
        'lib/memory/probe.ts',
        "import { VectorStore } from '@langchain/core/vectorstores';\nexport const x = VectorStore;\n",
      ),
    ).toHaveLength(1);
    expect(
      await problems(
        'lib/ai-sdk/probe.ts',
        "import { VectorStore } from '@langchain/core/vectorstores';\nexport const x = VectorStore;\n",
      ),
    ).toEqual([expect.stringContaining('only lib/langchain/** imports @langchain/core')]);
    expect(await problems('lib/index.ts', "export { memoryTools } from './ai-sdk/memory-tools.js';\n")).toHaveLength(1);
    expect(
      await problems(
        'lib/agent/probe.ts',
        "import { memoryTools } from '../ai-sdk/memory-tools.js';\nexport const x = memoryTools;\n",
      ),
    ).toHaveLength(1);
    // Adapters are built on the public Engram and the agent layer only.
    expect(
      await problems(
        'lib/ai-sdk/probe.ts',
        "import { addMemories } from '../engine/memories.js';\nexport const x = addMemories;\n",
      ),
    ).toHaveLength(1);
    expect(
      await problems(
        'lib/langchain/probe.ts',
        "import { Conversation } from '../memory/conversation.js';\nexport const x = Conversation;\n",
      ),
    ).toHaveLength(1);
    expect(
      await problems(
        'lib/langchain/probe.ts',
        "import { memoryTools } from '../ai-sdk/memory-tools.js';\nexport const x = memoryTools;\n",
      ),
    ).toHaveLength(1);
  });

  it('lint passes an adapter built on the agent layer, the facade and its own framework', async () => {
    expect(
      await problems(
        'lib/ai-sdk/probe.ts',
        "import { tool } from 'ai';\nimport { AgentTools } from '../agent/tools.js';\nimport { Engram } from '../engram.js';\nimport type { AddResult } from '../engine/memories.js';\nexport const x = [tool, AgentTools, Engram];\nexport type Y = AddResult;\n",
      ),
    ).toEqual([]);
    expect(
      await problems(
        'lib/langchain/probe.ts',
        "import { VectorStore } from '@langchain/core/vectorstores';\nimport { ValidationError } from '../errors.js';\nexport const x = [VectorStore, ValidationError];\n",
      ),
    ).toEqual([]);
  });

  it('lint passes arrows that point down and type-only imports that point up', async () => {
    expect(
      await problems(
        'lib/engine/probe.ts',
        "import { writeTransaction } from '../store/write.js';\nexport const x = writeTransaction;\n",
      ),
    ).toEqual([]);
    expect(
      await problems('lib/agent/probe.ts', "import { Engram } from '../engram.js';\nexport const x = Engram;\n"),
    ).toEqual([]);
    expect(
      await problems(
        'lib/store/probe.ts',
        "import type { EngineStore } from '../engine/engine-store.js';\nexport type X = EngineStore;\n",
      ),
    ).toEqual([]);
  });
});
