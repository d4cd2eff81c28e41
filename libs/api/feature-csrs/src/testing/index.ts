export * from './csr-test-world';
