/** L2 insights: communities of the memory graph and reflections on quiet streams. */
export * from './graph';
export * from './communities';
export * from './summarize';
export * from './plan-insights';
export * from './reflection';
export * from './commands';
