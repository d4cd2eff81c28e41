import ssh2 from 'ssh2';

type KeyPairOptions = Parameters<typeof ssh2.utils.generateKeyPairSync>[1];

/**
 * An ed25519 key pair from ssh2's generator that ssh2 itself can parse again. About one pair in 256
 * cannot be: the generator strips a public key's leading zero byte (mscdex/ssh2#1390, #1513), and a
 * spec whose server or client key is such a pair fails with "Malformed OpenSSH private key".
 */
export function parseableEd25519KeyPair(options?: KeyPairOptions & { passphrase?: string }): { private: string; public: string } {
  for (;;) {
    const pair = options === undefined ? ssh2.utils.generateKeyPairSync('ed25519') : ssh2.utils.generateKeyPairSync('ed25519', options);
    const parsedPrivate = ssh2.utils.parseKey(pair.private, options?.passphrase);
    if (!(ssh2.utils.parseKey(pair.public) instanceof Error) && !(parsedPrivate instanceof Error)) {
      return pair;
    }
  }
}
