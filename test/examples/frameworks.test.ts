/**
 * The framework examples (examples/), run with the frameworks' real packages against a real node:
 * LangChain.js (a retriever and a chat message history over Strata) and the Vercel AI SDK (remember and
 * recall tools, called by generateText's own tool loop). No LLM is needed to exercise the memory calls:
 * the AI SDK's scripted test model (ai/test) stands in for one and asks for the tool calls.
 */
import { randomUUID } from 'node:crypto';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { StrataClient } from '@strata/client';
import { StrataChatMessageHistory, StrataRetriever } from '../../examples/langchain/strata-memory';
import { strataTools } from '../../examples/vercel-ai/strata-tools';
import { removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const ADMIN = 'framework-examples-admin-key';

describe('framework examples against a real node', () => {
  let node: ServerProcess;
  let client: StrataClient;

  beforeAll(async () => {
    node = await startServer({ env: { STRATA_ADMIN_API_KEY: ADMIN, STRATA_ADMIN_PASSWORD: 'a-long-password', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    const admin = new StrataClient({ baseUrl: node.url, apiKey: ADMIN });
    const { key } = await admin.createApiKey({ name: 'examples', role: 'write', user_ids: ['ines', 'tomas'] });
    client = new StrataClient({ baseUrl: node.url, apiKey: key }); // what an agent holds: a write key for its users
  }, 60_000);

  afterAll(async () => {
    await node?.stop();
    removeDir(node?.dataDir ?? '');
  });

  it('LangChain: the chat history round-trips through a stream, and the retriever finds it as Documents', async () => {
    const streamId = randomUUID();
    const history = new StrataChatMessageHistory({ client, userId: 'ines', streamId });
    await history.addMessages([
      new HumanMessage('I am allergic to peanuts, please remember that.'),
      new AIMessage('Noted: no peanuts in any recipe I suggest.'),
      new ToolMessage({ content: '{"saved":true}', tool_call_id: 'call-1' }),
    ]);
    await history.addMessage(new HumanMessage('My sister Marta lives in Braga.'));
    const back = await history.getMessages();
    expect(back.map((m) => [m.getType(), m.content])).toEqual([
      ['human', 'I am allergic to peanuts, please remember that.'],
      ['ai', 'Noted: no peanuts in any recipe I suggest.'],
      ['tool', '{"saved":true}'],
      ['human', 'My sister Marta lives in Braga.'],
    ]);
    expect((back[2] as ToolMessage).tool_call_id).toBe('call-1');

    const retriever = new StrataRetriever({ client, userId: 'ines', limit: 3 });
    const docs = await retriever.invoke('what is Ines allergic to? peanuts');
    expect(docs.length).toBeGreaterThan(0);
    expect(docs[0].pageContent).toContain('peanuts');
    expect(docs[0].metadata).toEqual(expect.objectContaining({ score: expect.any(Number), transaction_time: expect.any(String) }));
    // scoped like the key: another user's memory is refused, not mixed in
    await expect(new StrataRetriever({ client, userId: 'someone-else' }).invoke('peanuts')).rejects.toThrow(/403|scope|not/i);
  }, 60_000);

  it('Vercel AI SDK: generateText calls remember, then recall, through the real tool loop', async () => {
    const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
    const toolCall = (toolName: string, input: unknown) => ({
      content: [{ type: 'tool-call' as const, toolCallId: randomUUID(), toolName, input: JSON.stringify(input) }],
      finishReason: { unified: 'tool-calls' as const, raw: undefined }, usage, warnings: [],
    });
    const model = new MockLanguageModelV3({
      doGenerate: [
        toolCall('remember', { content: 'Tomas prefers window seats on long flights.' }),
        toolCall('recall', { query: 'Which seat does Tomas prefer on flights?' }),
        { content: [{ type: 'text' as const, text: 'A window seat.' }], finishReason: { unified: 'stop' as const, raw: undefined }, usage, warnings: [] },
      ],
    });
    const result = await generateText({ model, tools: strataTools({ client, userId: 'tomas' }), stopWhen: stepCountIs(5), prompt: 'Remember my seat preference, then check it.' });

    expect(result.text).toBe('A window seat.');
    const results = result.steps.flatMap((s) => s.toolResults);
    expect(results.map((r) => r.toolName)).toEqual(['remember', 'recall']);
    expect(results[0].output).toEqual({ stored: true, event_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const recalled = results[1].output as { content: string }[];
    expect(recalled[0].content).toContain('window seats');
    // what the model was given back is what Strata answered
    expect(JSON.stringify(model.doGenerateCalls[2].prompt)).toContain('window seats');
  }, 60_000);
});
