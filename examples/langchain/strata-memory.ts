/**
 * Strata as LangChain.js memory: a retriever over a user's long-term memory (what consolidation made
 * of everything the user said, plus what was said a moment ago), and a chat message history kept as the
 * events of one Strata stream (durable, replicated, and consolidated into that same memory).
 *
 *   const client = new StrataClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.STRATA_API_KEY });
 *   const memory = new StrataRetriever({ client, userId: 'alice', limit: 5 });
 *   const docs = await memory.invoke('Where does Alice live?');
 *   const history = new StrataChatMessageHistory({ client, userId: 'alice', streamId: sessionUuid });
 */
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import { Document } from '@langchain/core/documents';
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { RetrieveRequest, StrataClient } from '@strata/client';

/** The nil UUID: retrieval over all of the user's streams favours none of them. */
const ANY_STREAM = '00000000-0000-0000-0000-000000000000';

export interface StrataRetrieverInput extends BaseRetrieverInput {
  client: StrataClient;
  userId: string;
  /** favour this stream (a conversation); default none */
  streamId?: string;
  limit?: number;
  /** further retrieval fields (docs/api.md §3), e.g. start_time/end_time for when things happened */
  request?: Omit<RetrieveRequest, 'query' | 'limit'>;
}

/** Each result becomes a Document: the unit's text, and its id, score, level and both times as metadata. */
export class StrataRetriever extends BaseRetriever {
  lc_namespace = ['strata', 'retrievers'];
  private readonly input: StrataRetrieverInput;

  constructor(input: StrataRetrieverInput) {
    super(input);
    this.input = input;
  }

  override async _getRelevantDocuments(query: string): Promise<Document[]> {
    const { client, userId, streamId, limit, request } = this.input;
    const answer = await client.retrieve(userId, streamId ?? ANY_STREAM, { ...request, query, limit: limit ?? 5 });
    return answer.results.map(({ unit, score }) => new Document({
      id: unit.id,
      pageContent: unit.content,
      metadata: {
        score, level: unit.level, memory_type: unit.memory_type, valid_time: unit.valid_time,
        transaction_time: unit.transaction_time, references: unit.references,
      },
    }));
  }
}

export interface StrataChatMessageHistoryInput {
  client: StrataClient;
  userId: string;
  /** one conversation: a UUID of your choosing */
  streamId: string;
}

const ROLE_OF: Record<string, 'user' | 'assistant' | 'system' | 'tool'> = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool' };

/** A conversation's messages as the events of one stream, in the order they were accepted. */
export class StrataChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['strata', 'chat_history'];

  constructor(private readonly input: StrataChatMessageHistoryInput) {
    super();
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  /** One batch, so the messages keep their order and are stored together or not at all. */
  override async addMessages(messages: BaseMessage[]): Promise<void> {
    const { client, userId, streamId } = this.input;
    const events = messages.map((m) => ({
      content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
      role: ROLE_OF[m.getType()] ?? 'user',
      ...(m.getType() === 'tool' ? { metadata: { tool_call_id: (m as ToolMessage).tool_call_id } } : {}),
    }));
    if (events.length > 0) await client.ingestBatch(userId, streamId, events);
  }

  async getMessages(): Promise<BaseMessage[]> {
    const { client, userId, streamId } = this.input;
    return (await client.allEvents(userId, streamId)).map((e) => toMessage(e.role, e.content, e.metadata));
  }

  /** Strata keeps what was said: clearing a conversation is not an append-only log's job (forget it instead). */
  override async clear(): Promise<void> {
    throw new Error('StrataChatMessageHistory keeps every message; forget memories with the forget routes instead.');
  }
}

function toMessage(role: string | null, content: string, metadata: Record<string, unknown> | null): BaseMessage {
  switch (role) {
    case 'assistant':
      return new AIMessage(content);
    case 'system':
      return new SystemMessage(content);
    case 'tool':
      return new ToolMessage({ content, tool_call_id: String(metadata?.tool_call_id ?? '') });
    default:
      return new HumanMessage(content);
  }
}
