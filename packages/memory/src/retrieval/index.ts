export * from './types';
export * from './filters';
export * from './graph';
export * from './fusion';
export * from './arbitration';
export * from './pipeline';
export * from './media';
export * from './phash';
