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
 */
import { importanceAnchorMs } from './decay';
import { effectiveTimeMs } from './filters';
import { kindFactor, kindFactorBeyond, namesIn, ownStems, type AnswerKind } from './intent';
import { isNamedSpeaker, isQuestion, normalizeSpeaker } from './query';
import { changeCue, facetsOf, isFacet, withoutSpeakerPrefix, type Facet } from '../text';
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
}

type Content = Pick<RetrievalUnit, 'content'>;

class Traits implements UnitTraits {
  readonly question: boolean;
  readonly timeMs: number;
  readonly anchorMs: number;
  readonly namedSpeaker: string | null;
  private cueValue: ReturnType<typeof changeCue> | undefined = undefined;
  private dedupe: string | undefined = undefined;
  private kinds: Map<AnswerKind, number> | undefined = undefined;
  private facetSet: ReadonlySet<Facet> | undefined = undefined;
  private stemSet: ReadonlySet<string> | undefined = undefined;
  private numberSet: ReadonlySet<string> | undefined = undefined;
  private nameSet: ReadonlySet<string> | undefined = undefined;

  constructor(private readonly unit: RetrievalUnit) {
    this.question = isQuestion(unit.content);
    this.timeMs = effectiveTimeMs(unit);
    this.anchorMs = importanceAnchorMs(unit);
    this.namedSpeaker = isNamedSpeaker(unit.speaker) ? normalizeSpeaker(unit.speaker) : null;
  }

  cue(): ReturnType<typeof changeCue> {
    if (this.cueValue === undefined) this.cueValue = changeCue(this.unit.content);
    return this.cueValue;
  }

  dedupeKey(): string {
    return (this.dedupe ??= dedupeKeyOf(this.unit));
  }

  kindFactor(kind: AnswerKind): number {
    // kindFactor is 1 for a question whatever the kind: no regular expression to run
    if (kind === null || this.question) return 1;
    let f = this.kinds?.get(kind);
    if (f === undefined) (this.kinds ??= new Map()).set(kind, (f = kindFactor(kind, this.unit.content)));
    return f;
  }

  kindFactorBeyond(kind: AnswerKind, known: ReadonlySet<string>): number {
    const f = this.kindFactor(kind);
    if (f < 1 || known.size === 0 || (kind !== 'person' && kind !== 'place' && kind !== 'identity')) return f;
    return kindFactorBeyond(kind, this.unit.content, (this.nameSet ??= namesIn(this.unit.content)), known);
  }

  stems(): ReadonlySet<string> {
    return (this.stemSet ??= ownStems(this.unit.content));
  }

  numbers(): ReadonlySet<string> {
    return (this.numberSet ??= new Set(withoutSpeakerPrefix(this.unit.content).match(/\d+(?:[.,:]\d+)*/g) ?? []));
  }

  facets(): ReadonlySet<Facet> {
    if (!this.facetSet) {
      const own = facetsOf(this.unit.content);
      if (this.unit.attribute && isFacet(this.unit.attribute)) own.add(this.unit.attribute);
      this.facetSet = own;
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

const dedupeKeyOf = (unit: Content): string => dedupeKey(unit.content);

const TRAITS = new WeakMap<object, Traits>();

/** The traits of a record, computed on its first query. */
export function traitsOf(unit: RetrievalUnit): UnitTraits {
  let t = TRAITS.get(unit);
  if (!t) TRAITS.set(unit, (t = new Traits(unit)));
  return t;
}
