// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata polyfill
// loaded first; and it must use Node's WebCrypto. Every module imports x509 from here.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1]);

export { x509 };
