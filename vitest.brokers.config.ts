import { defineConfig } from 'vitest/config';

/**
 * The queue destination tests against real brokers (npm run test:brokers): RabbitMQ, NATS
 * with JetStream, Redis and Mosquitto, on the machine (node-svc starts them) or wherever
 * HOOK_TEST_AMQP_URL, HOOK_TEST_NATS_URL, HOOK_TEST_REDIS_URL and HOOK_TEST_MQTT_URL say.
 * Apart from `npm test`, which must pass with only Node and npm. relay-delivery.test.ts
 * goes through a real relay, so the run has the PostgreSQL server and template database
 * `npm test` has (test/support/global-setup.ts: HOOK_TEST_DATABASE_URL, else an embedded one).
 */
export default defineConfig({
  test: {
    include: ['test/brokers/**/*.test.ts'],
    globalSetup: ['./test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
