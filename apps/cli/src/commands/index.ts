/**
 * The command registry: every `hook` command, in the order `hook --help` lists them.
 * To add a command, write `commands/<noun>/<verb>.ts` (or `commands/<verb>.ts`) that
 * default-exports `defineCommand({...})`, import it here and add it to COMMANDS; a new
 * noun also gets a line in COMMAND_GROUPS.
 */
import type { CommandModule } from '../command.ts';
import accountGet from './account/get.ts';
import accountPlan from './account/plan.ts';
import accountUpdate from './account/update.ts';
import accountVerifyDomain from './account/verify-domain.ts';
import accountDelete from './account/delete.ts';
import alertsClear from './alerts/clear.ts';
import alertsGet from './alerts/get.ts';
import alertsSet from './alerts/set.ts';
import alertsTest from './alerts/test.ts';
import apiKeysCreate from './api-keys/create.ts';
import apiKeysList from './api-keys/list.ts';
import apiKeysRevoke from './api-keys/revoke.ts';
import destinationsAdd from './destinations/add.ts';
import destinationsBlocked from './destinations/blocked.ts';
import destinationsDelete from './destinations/delete.ts';
import destinationsList from './destinations/list.ts';
import destinationsRotateSecret from './destinations/rotate-secret.ts';
import destinationsSecret from './destinations/secret.ts';
import destinationsUnblock from './destinations/unblock.ts';
import destinationsUpdate from './destinations/update.ts';
import endpointsCreate from './endpoints/create.ts';
import endpointsDelete from './endpoints/delete.ts';
import endpointsGet from './endpoints/get.ts';
import endpointsList from './endpoints/list.ts';
import endpointsRotateSecret from './endpoints/rotate-secret.ts';
import endpointsSecret from './endpoints/secret.ts';
import endpointsUpdate from './endpoints/update.ts';
import endpointsUse from './endpoints/use.ts';
import eventsGet from './events/get.ts';
import eventsList from './events/list.ts';
import eventsReplay from './events/replay.ts';
import eventsExport from './events/export.ts';
import eventsTail from './events/tail.ts';
import eventsWait from './events/wait.ts';
import issuesAck from './issues/ack.ts';
import issuesGet from './issues/get.ts';
import issuesList from './issues/list.ts';
import issuesResolve from './issues/resolve.ts';
import issuesRetry from './issues/retry.ts';
import listen from './listen.ts';
import login from './login.ts';
import logout from './logout.ts';
import mcp from './mcp.ts';
import notificationsClear from './notifications/clear.ts';
import notificationsEvents from './notifications/events.ts';
import notificationsGet from './notifications/get.ts';
import notificationsSet from './notifications/set.ts';
import membersAdd from './members/add.ts';
import membersList from './members/list.ts';
import membersRemove from './members/remove.ts';
import membersRole from './members/role.ts';
import send from './send.ts';
import signup from './signup.ts';
import transformTest from './transform/test.ts';
import trigger from './trigger.ts';
import whoami from './whoami.ts';

/** One line per noun for `hook --help`. */
export const COMMAND_GROUPS: Readonly<Record<string, string>> = {
  account: 'Show the account, change its plan and its settings, or delete it',
  endpoints: 'Create and manage endpoints (receiving URLs and where their events go)',
  destinations: 'Where an endpoint\'s events go: add, pause, limit and remove destinations (URLs, brokers or `hook listen`), and unblock ordered ones',
  events: 'Inspect, replay and export received events, or wait for one (scripts, CI)',
  notifications: 'Where the account\'s own notifications go (usage, plan, disabled endpoints, failed events), and those sent',
  alerts: 'Alerts to Slack and email when an issue opens or a destination is disabled: channels, tests and those sent',
  members: 'Manage the team: who has access and with which role',
  'api-keys': 'Create, list and revoke API keys (one per machine or script)',
  transform: 'Try endpoint transformations (JavaScript that reshapes events) before using them',
};

export const COMMANDS: readonly CommandModule[] = [
  signup,
  login,
  logout,
  whoami,
  accountGet,
  accountPlan,
  accountUpdate,
  accountVerifyDomain,
  accountDelete,
  endpointsCreate,
  endpointsList,
  endpointsGet,
  endpointsUpdate,
  endpointsUse,
  endpointsDelete,
  endpointsSecret,
  endpointsRotateSecret,
  destinationsList,
  destinationsAdd,
  destinationsUpdate,
  destinationsDelete,
  destinationsSecret,
  destinationsRotateSecret,
  destinationsBlocked,
  destinationsUnblock,
  eventsList,
  eventsGet,
  eventsReplay,
  eventsTail,
  eventsWait,
  eventsExport,
  issuesList,
  issuesGet,
  issuesAck,
  issuesResolve,
  issuesRetry,
  notificationsSet,
  notificationsGet,
  notificationsEvents,
  notificationsClear,
  alertsGet,
  alertsSet,
  alertsClear,
  alertsTest,
  membersList,
  membersAdd,
  membersRole,
  membersRemove,
  apiKeysList,
  apiKeysCreate,
  apiKeysRevoke,
  transformTest,
  send,
  trigger,
  listen,
  mcp,
];
