/**
 * Step 4: who said it. Order of evidence: `metadata.speaker`, a "Name: text" prefix, the agent id
 * (for agent/assistant/tool turns), then the role.
 *
 * Attribution is kept as a "Name: " prefix on the unit content ("Caroline: I went to the support group").
 * Why a prefix rather than rewriting to the third person ("Caroline went …"): it is lossless (no
 * grammar rewriting of "I'm", "my", "me" that can go wrong), the name is still a token that text and
 * vector retrieval match for questions like "When did Caroline …", and the original wording stays
 * quotable. Events of the plain `user` role get no prefix: there "I" already is the memory's owner.
 */
import { isEventRole, type EventRecord } from '@strata/store';
import { isLeadIn } from './discourse';

export interface Speaker {
  /** Who said it: a name, an agent id, or a role (`user`, `assistant`, `tool`, `system`); null if unknown. */
  speaker: string | null;
  /** The text without a "Name:" prefix that was used as the speaker. */
  text: string;
  /** The prefix to put before each statement of this event ("" for none). */
  prefix: string;
}

/** "Caroline: …", "Dr. Smith: …", "Agent-7: …"; at most four words, no sentence punctuation, not a URL scheme or time. */
const NAME_PREFIX = /^([\p{Lu}][\p{L}\p{N}'.\-_]*(?:\s+[\p{Lu}][\p{L}\p{N}'.\-_]*){0,3}):\s+(?=\S)/u;

export function resolveSpeaker(event: Pick<EventRecord, 'role' | 'agent_id' | 'metadata'>, text: string): Speaker {
  const meta = event.metadata?.speaker;
  const prefixed = NAME_PREFIX.exec(text);
  let speaker: string | null = null;
  let body = text;
  if (typeof meta === 'string' && meta.trim() !== '') {
    speaker = meta.trim();
    // The same name repeated as a prefix would be said twice.
    if (prefixed && prefixed[1].toLowerCase() === speaker.toLowerCase()) body = text.slice(prefixed[0].length);
  } else if (prefixed && !isAgentRole(event.role) && !/^(?:https?|mailto|Note|Re|Fwd|Subject|Step \d+)$/i.test(prefixed[1]) && !isLeadIn(prefixed[1])) {
    // ("Update: the move got pushed" is the user's news, not a speaker called Update)
    // An assistant's or a tool's "Booked: …" labels its own text; only people's turns carry a "Name:" of the speaker.
    speaker = prefixed[1];
    body = text.slice(prefixed[0].length);
  } else if (event.agent_id && event.role !== 'user') {
    speaker = event.agent_id;
  } else if (event.role && isEventRole(event.role.toLowerCase())) {
    speaker = event.role.toLowerCase();
  }
  const prefix = speaker && speaker !== 'user' ? `${speaker}: ` : '';
  return { speaker, text: body.trim(), prefix };
}

/** The normalized subject a first-person statement is about: the speaker's name, or `user` for the owner. */
export function normalizeSubject(speaker: string | null): string {
  if (!speaker || speaker === 'user') return 'user';
  return speaker.trim().toLowerCase().replace(/\s+/g, ' ');
}

function isAgentRole(role: string | null | undefined): boolean {
  const r = role?.toLowerCase();
  return r === 'assistant' || r === 'tool' || r === 'system';
}
