/**
 * The payloads `hook trigger` sends: apps/cli/fixtures/<provider>/<event>.json, shaped as
 * the provider documents them, one per sample its provider file lists
 * (packages/core/src/providers/<name>.ts, `samples.events`). Imported here so the bundle
 * holds them; apps/cli/test/trigger.test.ts checks that each sample has its fixture and
 * each fixture its sample.
 */
import githubPing from '../../fixtures/github/ping.json' with { type: 'json' };
import githubPullRequest from '../../fixtures/github/pull_request.json' with { type: 'json' };
import githubPush from '../../fixtures/github/push.json' with { type: 'json' };
import gitlabMergeRequest from '../../fixtures/gitlab/merge_request.json' with { type: 'json' };
import gitlabPush from '../../fixtures/gitlab/push.json' with { type: 'json' };
import shopifyOrdersCreate from '../../fixtures/shopify/orders/create.json' with { type: 'json' };
import shopifyProductsUpdate from '../../fixtures/shopify/products/update.json' with { type: 'json' };
import slackAppMention from '../../fixtures/slack/app_mention.json' with { type: 'json' };
import slackUrlVerification from '../../fixtures/slack/url_verification.json' with { type: 'json' };
import stripeCheckoutSessionCompleted from '../../fixtures/stripe/checkout.session.completed.json' with { type: 'json' };
import stripeInvoicePaid from '../../fixtures/stripe/invoice.paid.json' with { type: 'json' };
import stripePaymentIntentSucceeded from '../../fixtures/stripe/payment_intent.succeeded.json' with { type: 'json' };

/** Each fixture by its path under apps/cli/fixtures/, without `.json`: `<provider>/<event>`. */
export const FIXTURES: Readonly<Record<string, unknown>> = {
  'github/push': githubPush,
  'github/pull_request': githubPullRequest,
  'github/ping': githubPing,
  'stripe/payment_intent.succeeded': stripePaymentIntentSucceeded,
  'stripe/checkout.session.completed': stripeCheckoutSessionCompleted,
  'stripe/invoice.paid': stripeInvoicePaid,
  'shopify/orders/create': shopifyOrdersCreate,
  'shopify/products/update': shopifyProductsUpdate,
  'slack/app_mention': slackAppMention,
  'slack/url_verification': slackUrlVerification,
  'gitlab/push': gitlabPush,
  'gitlab/merge_request': gitlabMergeRequest,
};
