// Preloaded into the API by bench/login-burst.ts (node --require): counts scrypt calls in
// flight (called, callback not yet run) and writes the peak to $SCRYPT_PEAK_FILE at exit.
// Measurement only; it changes nothing the API does.
'use strict';
const crypto = require('node:crypto');
const { syncBuiltinESMExports } = require('node:module');
const { writeFileSync } = require('node:fs');

const original = crypto.scrypt;
let inFlight = 0;
let peak = 0;
let calls = 0;
crypto.scrypt = function countedScrypt(...args) {
  const callback = args.pop();
  inFlight += 1;
  calls += 1;
  peak = Math.max(peak, inFlight);
  return original.call(this, ...args, (...results) => {
    inFlight -= 1;
    callback(...results);
  });
};
syncBuiltinESMExports();
process.on('exit', () => {
  if (process.env.SCRYPT_PEAK_FILE) {
    writeFileSync(process.env.SCRYPT_PEAK_FILE, JSON.stringify({ peak, calls }));
  }
});
