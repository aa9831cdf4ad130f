/** Semantic forgetting and updating (CONTRACT §7): pure planners; the lead wires them into commands. */
export * from './errors';
export * from './facts';
export * from './instruction';
export * from './forget';
export * from './update';
export * from './plan';
