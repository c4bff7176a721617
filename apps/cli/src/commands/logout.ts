import { defineCommand } from '../command.ts';

export default defineCommand<[], object>({
  path: ['logout'],
  summary: 'Remove the profile (its API key and relay URL) from the config file',
  description:
    'Remove the profile, with its API key and relay URL, from the config file.\n' +
    'The key itself keeps working on the relay: revoke it with `hook api-keys revoke <id>` if it leaked (`hook api-keys list` shows the ids).',
  examples: [
    ['hook logout', 'forget the default profile'],
    ['hook logout --profile prod', 'forget profile "prod"'],
  ],
  async run(context) {
    const { settings, config, out } = context;
    const removed = config.removeProfile(settings.profile);
    await out.result({ profile: settings.profile, removed }, [
      { kind: 'text', text: removed ? `Logged out: removed profile '${settings.profile}' from ${config.path}.` : `Profile '${settings.profile}' was not saved; nothing to remove.` },
    ]);
  },
});
