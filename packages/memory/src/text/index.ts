/**
 * Memory's one text toolkit: words (tokenizer and helpers), stop words, the stemmer, and the fact
 * vocabulary and readers. Consolidation, semantic update/forget, planning and org all read text through it,
 * so a fact is normalized the same way when it is stored and when it is corrected.
 */
export * from './words';
export * from './stopwords';
export * from './stem';
export * from './attributes';
export * from './facets';
export * from './changes';
export * from './emoji';
export * from './memo';
