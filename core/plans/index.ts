export * from './plans.ts';
export * from './credit-ledger.ts';
export * from './metering.ts';
export * from './summary.ts';
