/** Organization knowledge (CONTRACT §9): records, list/filter/sort/cursor, mergeable per-shard counts. */
export * from './errors';
export * from './knowledge';
export * from './metrics';
export * from './list';
