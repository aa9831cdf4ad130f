/** L3 goals and tasks: pure planners and state transitions (the lead wires them into commands). */
export * from './errors';
export * from './status';
export * from './progress';
export * from './tree';
export * from './text-plan';
export * from './llm-plan';
export * from './extract';
export * from './batch';
