export * from './lib/scrub-secrets';
