/**
 * A stand-in for a remote chat model, for tests of consolidation with `[llm]` configured: an HTTP server on
 * 127.0.0.1 speaking the OpenAI chat-completions protocol (`POST /v1/chat/completions`, Bearer key,
 * `response_format: json_object`, a `chat.completion` reply), recording what it was sent.
 *
 * It answers consolidation's extraction prompt (memory/consolidation/llm-extract.ts) from a script, the
 * way a model would for those turns: each event line of the prompt (`[i] (speaker: …) text`) is looked up
 * by its text; a scripted entry gives the facts or the noise verdict, and an event the script does not
 * know is left out of the reply (consolidation then drafts it offline, as it does for a model's gaps).
 * It replays what a test says a model answers; it judges nothing itself.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedFact {
  statement: string;
  subject?: string | null;
  attribute?: string | null;
  value?: string | null;
  memory_type?: 'factual' | 'procedural';
  keywords?: string[];
}

/** The model's answer for one event's text: its facts, or why it holds nothing to remember. */
export type ScriptedAnswer = { facts: ScriptedFact[] } | { noise: string };

export interface ChatRequestSeen {
  authorization: string | undefined;
  body: { model?: string; messages?: Array<{ role: string; content: string }>; response_format?: unknown; [k: string]: unknown };
}

const EVENT_LINE = /^\[(\d+)\] \(speaker: [^,]*, type: [^,]*, time: [^)]*\) (.*)$/;

export class ScriptedChatModel {
  readonly requests: ChatRequestSeen[] = [];
  private server: Server | null = null;

  constructor(private readonly script: ReadonlyMap<string, ScriptedAnswer>, private readonly apiKey: string) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => { raw += c; });
      req.on('end', () => {
        const send = (status: number, body: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return send(404, { error: { message: 'Not found', type: 'invalid_request_error' } });
        if (req.headers.authorization !== `Bearer ${this.apiKey}`) return send(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
        let body: ChatRequestSeen['body'];
        try {
          body = JSON.parse(raw);
        } catch {
          return send(400, { error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error' } });
        }
        this.requests.push({ authorization: req.headers.authorization, body });
        const prompt = body.messages?.find((m) => m.role === 'user')?.content ?? '';
        send(200, {
          id: `chatcmpl-${this.requests.length}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(this.answer(prompt)) }, finish_reason: 'stop' }],
          usage: { prompt_tokens: Math.ceil(prompt.length / 4), completion_tokens: 0, total_tokens: Math.ceil(prompt.length / 4) },
        });
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  private answer(prompt: string): { facts: unknown[]; noise: unknown[] } {
    const facts: unknown[] = [];
    const noise: unknown[] = [];
    for (const line of prompt.split('\n')) {
      const m = EVENT_LINE.exec(line);
      if (!m) continue;
      const event = Number(m[1]);
      const scripted = this.script.get(m[2].trim());
      if (!scripted) continue;
      if ('noise' in scripted) noise.push({ event, reason: scripted.noise });
      else for (const f of scripted.facts) facts.push({ event, memory_type: 'factual', keywords: [], subject: null, attribute: null, value: null, ...f });
    }
    return { facts, noise };
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
}
