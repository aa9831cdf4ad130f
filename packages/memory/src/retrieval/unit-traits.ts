/**
 * What ranking reads from a unit record that depends on the record alone: whether it is a question,
 * its effective time, when its importance was last renewed, its speaker as a query would name it, its
 * de-duplication key, the change it announces, its kind factor per kind of answer, the kinds of fact
 * it states. Computed the first
 * time a query asks and kept with the record, so a unit that is a candidate of many queries is parsed
 * once (a profile of 8 clients over 20 users: regular expressions and date parsing of these were a
 * third of fusion's time).
 *
 * Keyed by the record object in a WeakMap: records are replaced, never changed in place (the indexes
 * put a new object for every new version), and a record no index holds any more takes its traits with
 * it. Each value is what the function it caches returns for the record, so ranking is unchanged.
 * What depends on the content alone (`ContentTraits`: every trait but the times, the speaker and the
 * stored attribute) goes over to the record that replaces one of the same content (`carryTraits`: a
 * reinforcement, a rebuild), so a unit's words are parsed once while they stay the same
 * (test/retrieval/unit-traits.test.ts counts the reads of `content`).
 */
import { importanceAnchorMs } from './decay';
import { effectiveTimeMs } from './filters';
import { givesOnlyNewValue, kindFactor, kindFactorBeyond, namesIn, ownStems, type AnswerKind } from './intent';
import { isNamedSpeaker, isQuestion, normalizeSpeaker } from './query';
import { changeCue, endsWithNewValue, facetsInOrder, facetsOf, isFacet, withoutSpeakerPrefix, type Facet } from '../text';
import type { RetrievalUnit } from './types';

export interface UnitTraits {
  /** query.ts `isQuestion` of the content */
  readonly question: boolean;
  /** filters.ts `effectiveTimeMs` */
  readonly timeMs: number;
  /** decay.ts `importanceAnchorMs` */
  readonly anchorMs: number;
  /** the normalized speaker when `isNamedSpeaker`, else null */
  readonly namedSpeaker: string | null;
  /** text/ `changeCue` of the content (computed on first use) */
  cue(): ReturnType<typeof changeCue>;
  /** fusion.ts `dedupeKey` of the content (computed on first use) */
  dedupeKey(): string;
  /** intent.ts `kindFactor` of the content for this kind of answer (computed on first use per kind) */
  kindFactor(kind: AnswerKind): number;
  /** intent.ts `kindFactorBeyond`: the same, when the question names `known` */
  kindFactorBeyond(kind: AnswerKind, known: ReadonlySet<string>): number;
  /**
   * The facets (text/facets.ts) the unit's own words state, and the attribute consolidation (or a
   * model) gave the fact even when no trigger word is in it ("We moved to York" is the residence a
   * model named). Computed on first use.
   */
  facets(): ReadonlySet<Facet>;
  /** intent.ts `ownStems`: the content's stems, speaker prefix aside (computed on first use) */
  stems(): ReadonlySet<string>;
  /** the numbers the content gives, as written ("10", "27,500", "6:05"; computed on first use) */
  numbers(): ReadonlySet<string>;
  /** text/ `facetsInOrder(content)[0]`, '' when none: the facet the content speaks of first (computed on first use) */
  firstFacet(): string;
  /** text/ `endsWithNewValue` of the content (computed on first use) */
  endsWithNewValue(): boolean;
  /** intent.ts `givesOnlyNewValue` of the content with its own cue (computed on first use) */
  givesOnlyNewValue(): boolean;
  /**
   * The people the content speaks of (intent.ts `namesIn`), the person it is addressed to aside ("Hey
   * Carla!", "congrats, Carla"): computed on first use
   */
  mentioned(): ReadonlySet<string>;
}

/**
 * What ranking reads from a record's content alone. A record replaced by one with the same content (a
 * reinforcement changes a unit's statistics, not its words; an index rebuilt after an eviction reads the
 * same units again) keeps these: `carryTraits`. Under a query storm (20 users × 1,000 events, 8 clients)
 * the text work on records touched for the first time, or replaced since (the answers' units are
 * reinforced every few seconds), was ~12% of the node's main thread.
 */
/** The person a statement opens by addressing ("Hey Carla!", "Carla, that's great", "congrats Carla!"). */
const OPENING_VOCATIVE = /^\s*(?:(?:[Hh](?:ey|i|ello|iya)|[Tt]hanks|[Tt]hank you|[Cc]ongrats|[Cc]ongratulations|[Ww]ow|[Oo]h|[Aa]w+|[Yy]es|[Yy]eah|[Oo]k|[Oo]kay|[Oo]mg|[Hh]aha)[,!.]?\s+)?\p{Lu}\p{Ll}+\s*[,!]/u;
/** The person a statement closes by addressing ("… see you soon, Carla!"). */
const CLOSING_VOCATIVE = /,\s*\p{Lu}\p{Ll}+\s*[!.?]*\s*$/u;

class ContentTraits {
  readonly question: boolean;
  private cueValue: ReturnType<typeof changeCue> | undefined = undefined;
  private dedupe: string | undefined = undefined;
  private kinds: Map<AnswerKind, number> | undefined = undefined;
  private facetSet: ReadonlySet<Facet> | undefined = undefined;
  private stemSet: ReadonlySet<string> | undefined = undefined;
  private numberSet: ReadonlySet<string> | undefined = undefined;
  private nameSet: ReadonlySet<string> | undefined = undefined;
  private mentionSet: ReadonlySet<string> | undefined = undefined;
  private first: string | undefined = undefined;
  private endsWithNew: boolean | undefined = undefined;
  private onlyNew: boolean | undefined = undefined;

  constructor(private readonly words: string) {
    this.question = isQuestion(words);
  }

  /** The content, for the computation of a trait (each one counted: `contentParses`). */
  private read(trait: string): string {
    parses.set(trait, (parses.get(trait) ?? 0) + 1);
    return this.words;
  }

  /** The content (what a caller computes from it besides these traits is counted too). */
  get content(): string {
    return this.read('other');
  }

  cue(): ReturnType<typeof changeCue> {
    if (this.cueValue === undefined) this.cueValue = changeCue(this.read('cue'));
    return this.cueValue;
  }

  dedupeKey(): string {
    return (this.dedupe ??= dedupeKey(this.read('dedupeKey')));
  }

  kindFactor(kind: AnswerKind): number {
    // kindFactor is 1 for a question whatever the kind: no regular expression to run
    if (kind === null || this.question) return 1;
    let f = this.kinds?.get(kind);
    if (f === undefined) (this.kinds ??= new Map()).set(kind, (f = kindFactor(kind, this.read('kindFactor'))));
    return f;
  }

  names(): ReadonlySet<string> {
    return (this.nameSet ??= namesIn(this.read('names')));
  }

  mentioned(): ReadonlySet<string> {
    return (this.mentionSet ??= namesIn(withoutSpeakerPrefix(this.content).replace(OPENING_VOCATIVE, ' ').replace(CLOSING_VOCATIVE, ' ')));
  }

  stems(): ReadonlySet<string> {
    return (this.stemSet ??= ownStems(this.read('stems')));
  }

  numbers(): ReadonlySet<string> {
    return (this.numberSet ??= new Set(withoutSpeakerPrefix(this.read('numbers')).match(/\d+(?:[.,:]\d+)*/g) ?? []));
  }

  /** text/ `facetsOf` of the content (the record adds its attribute) */
  facets(): ReadonlySet<Facet> {
    return (this.facetSet ??= facetsOf(this.read('facets')));
  }

  firstFacet(): string {
    return (this.first ??= facetsInOrder(this.read('firstFacet'))[0] ?? '');
  }

  endsWithNewValue(): boolean {
    return (this.endsWithNew ??= endsWithNewValue(this.read('endsWithNewValue')));
  }

  givesOnlyNewValue(): boolean {
    return (this.onlyNew ??= givesOnlyNewValue(this.read('givesOnlyNewValue'), this.cue()));
  }

  /**
   * What ranking reads of every candidate it scores or lists, now (`warmTraits`): the own stems (the
   * context-only factor), the change cue (endings), the kind factors and the facets (the facet list). The
   * rest (names, first facet, numbers, endings' new values, de-duplication key) is read of a few candidates
   * a query (the versions' pool, the results) and costs more than it saves when computed for every record:
   * ~250 µs a record in all (facets 40-130, the first facet 80-150), against ~100 for these.
   */
  warm(): void {
    this.stems();
    this.cue();
    this.facets();
    for (const kind of WARMED_KINDS) this.kindFactor(kind);
  }
}

/** The kinds of answer whose factor is read from the content alone ('identity' also needs the question's names). */
const WARMED_KINDS: readonly AnswerKind[] = ['time', 'number', 'place', 'person'];

/** The traits `warm` computes (`contentParses` names them so). */
export const WARMED_TRAITS: readonly string[] = ['stems', 'cue', 'facets', 'kindFactor'];

class Traits implements UnitTraits {
  readonly question: boolean;
  readonly timeMs: number;
  readonly anchorMs: number;
  readonly namedSpeaker: string | null;
  private facetSet: ReadonlySet<Facet> | undefined = undefined;

  constructor(private readonly unit: RetrievalUnit, readonly text: ContentTraits) {
    this.question = text.question;
    this.timeMs = effectiveTimeMs(unit);
    this.anchorMs = importanceAnchorMs(unit);
    this.namedSpeaker = isNamedSpeaker(unit.speaker) ? normalizeSpeaker(unit.speaker) : null;
  }

  cue(): ReturnType<typeof changeCue> {
    return this.text.cue();
  }

  dedupeKey(): string {
    return this.text.dedupeKey();
  }

  kindFactor(kind: AnswerKind): number {
    return this.text.kindFactor(kind);
  }

  kindFactorBeyond(kind: AnswerKind, known: ReadonlySet<string>): number {
    const f = this.text.kindFactor(kind);
    if (f < 1 || known.size === 0 || (kind !== 'person' && kind !== 'place' && kind !== 'identity')) return f;
    return kindFactorBeyond(kind, this.text.content, this.text.names(), known);
  }

  stems(): ReadonlySet<string> {
    return this.text.stems();
  }

  numbers(): ReadonlySet<string> {
    return this.text.numbers();
  }

  firstFacet(): string {
    return this.text.firstFacet();
  }

  endsWithNewValue(): boolean {
    return this.text.endsWithNewValue();
  }

  givesOnlyNewValue(): boolean {
    return this.text.givesOnlyNewValue();
  }

  mentioned(): ReadonlySet<string> {
    return this.text.mentioned();
  }

  facets(): ReadonlySet<Facet> {
    if (!this.facetSet) {
      const own = this.text.facets();
      const attribute = this.unit.attribute;
      this.facetSet = attribute && isFacet(attribute) && !own.has(attribute) ? new Set([...own, attribute]) : own;
    }
    return this.facetSet;
  }
}

/** Normalized content used for de-duplication: case, accents' composition, punctuation and spacing ignored. */
export function dedupeKey(content: string): string {
  return content
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** computations from a record's content so far, by trait (`contentParses`) */
const parses = new Map<string, number>();

/**
 * How many computations of each trait read a record's content since the process started: a test's measure
 * of the text work queries do (a query that finds a trait computed adds none of it).
 */
export function contentParses(): ReadonlyMap<string, number> {
  return new Map(parses);
}

const TRAITS = new WeakMap<object, Traits>();
/** content traits carried to a record before its first query (`carryTraits`) */
const CARRIED = new WeakMap<object, ContentTraits>();

/** The traits of a record, computed on its first query. */
export function traitsOf(unit: RetrievalUnit): UnitTraits {
  let t = TRAITS.get(unit);
  if (!t) TRAITS.set(unit, (t = new Traits(unit, CARRIED.get(unit) ?? new ContentTraits(unit.content))));
  return t;
}

/**
 * `after` replaces `before` in an index: when its content is the same, it keeps what was computed from
 * the content (`ContentTraits`); what depends on the rest of the record (times, speaker, attribute) is
 * computed from `after` on its first query, as for any record. Every value is still what the function it
 * caches returns for `after`.
 */
export function carryTraits(before: RetrievalUnit, after: RetrievalUnit): void {
  if (before === after || before.content !== after.content) return;
  const text = TRAITS.get(before)?.text ?? CARRIED.get(before);
  if (text) CARRIED.set(after, text);
}

/**
 * Computes now what queries read of a record (every trait above), so that no query pays for it: the index
 * lifecycle calls it for the records of a small user after a build and for each record a refresh puts
 * (server indexes/derived.ts). Each value is the one a query would compute on first use.
 */
export function warmTraits(unit: RetrievalUnit): void {
  const t = traitsOf(unit) as Traits;
  t.text.warm();
  t.facets();
}
