/** Every MCP tool, in the order tools/list gives them. A new tool: one module in this folder, one line here, one entry in rest-coverage.ts. */
import type { HookTool } from '../tool.ts';
import addDestination from './add-destination.ts';
import acknowledgeIssue from './acknowledge-issue.ts';
import addMember from './add-member.ts';
import bulkReplay from './bulk-replay.ts';
import clearNotifications from './clear-notifications.ts';
import createEndpoint from './create-endpoint.ts';
import deleteAccount from './delete-account.ts';
import deleteDestination from './delete-destination.ts';
import deleteEndpoint from './delete-endpoint.ts';
import getAccount from './get-account.ts';
import getEndpoint from './get-endpoint.ts';
import getEvent from './get-event.ts';
import getIssue from './get-issue.ts';
import getNotifications from './get-notifications.ts';
import listBlockedKeys from './list-blocked-keys.ts';
import listDestinations from './list-destinations.ts';
import listEndpoints from './list-endpoints.ts';
import listEvents from './list-events.ts';
import listIssueEvents from './list-issue-events.ts';
import listIssues from './list-issues.ts';
import listMembers from './list-members.ts';
import listNotificationEvents from './list-notification-events.ts';
import removeMember from './remove-member.ts';
import replayEvent from './replay-event.ts';
import resolveIssue from './resolve-issue.ts';
import retryIssue from './retry-issue.ts';
import sendTestEvent from './send-test-event.ts';
import setMemberRole from './set-member-role.ts';
import setNotificationUrl from './set-notification-url.ts';
import signUp from './sign-up.ts';
import testTransformation from './test-transformation.ts';
import unblockKey from './unblock-key.ts';
import updateAccount from './update-account.ts';
import verifyCustomDomain from './verify-custom-domain.ts';
import updateDestination from './update-destination.ts';
import updateEndpoint from './update-endpoint.ts';
import upgradePlan from './upgrade-plan.ts';

export const HOOK_TOOLS: readonly HookTool<any, any>[] = [
  signUp,
  getAccount,
  upgradePlan,
  updateAccount,
  verifyCustomDomain,
  deleteAccount,
  createEndpoint,
  listEndpoints,
  getEndpoint,
  updateEndpoint,
  deleteEndpoint,
  listDestinations,
  addDestination,
  updateDestination,
  deleteDestination,
  listBlockedKeys,
  unblockKey,
  listEvents,
  getEvent,
  replayEvent,
  bulkReplay,
  listIssues,
  getIssue,
  listIssueEvents,
  acknowledgeIssue,
  resolveIssue,
  retryIssue,
  sendTestEvent,
  testTransformation,
  setNotificationUrl,
  getNotifications,
  listNotificationEvents,
  clearNotifications,
  listMembers,
  addMember,
  setMemberRole,
  removeMember,
];
