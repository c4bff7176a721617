/**
 * The HOOK_SECRET_KEY of test and bench relays: fixed, so relays a test starts on one
 * database (and an ORM a test opens beside them) all read each other's encrypted signing
 * secrets. A test of key handling passes its own.
 */
export const TEST_SECRET_KEY = Buffer.alloc(32, 0x5a).toString('base64');
export const TEST_SECRET_KEY_BYTES = Buffer.from(TEST_SECRET_KEY, 'base64');
