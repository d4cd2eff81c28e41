export * from './csr-test-world';
export * from './csr-replica';
