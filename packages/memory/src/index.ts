export * from './providers/types';
export * from './ingest/prepare-event';
