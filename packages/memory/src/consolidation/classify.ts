/**
 * Step 5: factual or procedural. Procedural memory is how things are done: what an agent, assistant or
 * tool did, and how-to instructions ("to deploy, run …", imperative step lists). Everything else is factual.
 */
import type { EventRecord, MemoryType } from '@strata/store';

/** Verbs that open an instruction when they start a sentence. */
const IMPERATIVE = new Set([
  'run', 'install', 'open', 'click', 'go', 'set', 'use', 'add', 'create', 'type', 'press', 'select', 'restart', 'deploy',
  'configure', 'enable', 'disable', 'make', 'check', 'copy', 'paste', 'save', 'delete', 'remove', 'start', 'stop', 'build',
  'push', 'pull', 'commit', 'merge', 'edit', 'change', 'update', 'upgrade', 'download', 'upload', 'enter', 'choose', 'log',
  'sign', 'navigate', 'mix', 'stir', 'bake', 'heat', 'preheat', 'boil', 'cut', 'chop', 'pour', 'put', 'turn', 'connect',
  'plug', 'unplug', 'reboot', 'execute', 'call', 'export', 'import', 'append', 'replace', 'verify', 'ensure', 'wait',
  'apply', 'attach', 'fill', 'submit', 'send', 'restore', 'clone', 'compile', 'test', 'mount', 'kill', 'launch', 'define',
]);

const STEP_MARKER = /(?:^|\n)\s*(?:\d+[.)]|step\s+\d+[:.]?|[-*•])\s+\S/i;
/** The marker of a list's line that has words after it: a number, "step N" or a bullet. */
const STEP_LINE_MARKER = /^\s*(?:\d+[.)]|step\s+\d+[:.]?|[-*•])\s+(?=\S)/i;

/** A step that reads as an instruction: an imperative, or a command to type (`npm ci`, "$ make"). */
function isInstruction(step: string): boolean {
  return startsImperative(step) || /^\s*(?:`|\$\s)/.test(step);
}

/** "How to …" opening the text, or "To <goal>, <imperative> …". ("It taught me how to cope" is not a how-to.) */
const HOW_TO = /^\s*(?:(?:here's\s+|this is\s+)?how to\b|to (?:\w+\s){0,4}?\w+,\s*(?:first\s+)?(?:you\s+(?:need|have)\s+to\s+|just\s+)?(\w+))/i;
const SEQUENCE = /\bfirst\b[^.]*\b(?:then|next|after that|finally)\b/i;

/** True when the text reads as instructions. */
export function isHowTo(text: string): boolean {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const stepLines = lines.filter((l) => STEP_LINE_MARKER.test(l));
  // a list is steps when they read as instructions ("1. Open settings\n2. Click reset"); minutes and
  // recaps list facts ("- Bettina is our new treasurer\n- subs go up to £55"), each one a statement
  if (stepLines.length >= 2 && stepLines.filter((l) => isInstruction(l.replace(STEP_LINE_MARKER, ''))).length * 2 >= stepLines.length) return true;
  const howTo = HOW_TO.exec(text);
  if (howTo) {
    if (/^how to/i.test(howTo[0])) return true;
    if (howTo[1] && IMPERATIVE.has(howTo[1].toLowerCase())) return true;
  }
  if (SEQUENCE.test(text) && startsImperative(text.replace(/^\s*first,?\s*/i, ''))) return true;
  // A lone imperative sentence is an instruction unless it is an exclamation or a question ("Create those
  // memories!"); so is the first sentence of several: "Call the landlord! Have to run, it's Wednesday so
  // book club at Marjorie's." tells a fact after an exclamation, it is no how-to.
  return startsImperative(text) && !/[?!]\s*$/.test(firstSentence(text));
}

/** The text up to its first sentence end (., ! or ? before a space), or all of it. */
function firstSentence(text: string): string {
  const t = text.trim();
  const end = /[.!?]+(?=\s)/.exec(t);
  return end ? t.slice(0, end.index + end[0].length) : t;
}

function startsImperative(text: string): boolean {
  const first = /^\s*(?:please\s+|then\s+|now\s+|next,?\s+|finally,?\s+)?([A-Za-z]+)/i.exec(text)?.[1]?.toLowerCase();
  // "Check out the new cafe" is a recommendation, not an instruction.
  if (/^\s*check\s+out\b/i.test(text)) return false;
  // "Change is possible", "Test results came back": a noun subject followed by its verb.
  if (/^\s*\w+\s+(?:is|was|are|were|has|had|can|could|will|would|'s)\b/i.test(text)) return false;
  return first !== undefined && IMPERATIVE.has(first);
}

export function hasStepMarkers(text: string): boolean {
  return STEP_MARKER.test(text);
}

export function classifyMemoryType(event: Pick<EventRecord, 'role' | 'agent_id'>, text: string): MemoryType {
  const role = event.role?.toLowerCase() ?? null;
  if (role === 'assistant' || role === 'tool' || role === 'system') return 'procedural';
  if (event.agent_id && role !== 'user') return 'procedural';
  return isHowTo(text) ? 'procedural' : 'factual';
}
