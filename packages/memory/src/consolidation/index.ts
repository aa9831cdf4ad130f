/** Offline consolidation: pending L0 events → a plan of L1 memory (see plan.ts). */
export * from './types';
export * from './text';
export * from './noise';
export * from './split';
export * from './speaker';
export * from './classify';
export * from './keywords';
export * from './temporal';
export * from './subject';
export * from './importance';
export * from './similarity';
export * from './similar-units';
export * from './drafts';
export * from './llm-extract';
export * from './invariants';
export * from './plan';
export * from './facts';
