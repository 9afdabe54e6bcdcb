/**
 * Request bodies shaped exactly as Slack sends them (after the receiver's form/JSON parsing), built
 * from what happened at the keyboard.
 */
import { CONSOLE_APP_ID, CONSOLE_BOT, CONSOLE_TEAM, type ConsoleChannel, type ConsoleUser } from "./world.js";

type Obj = Record<string, unknown>;

const userRef = (u: ConsoleUser) => ({ id: u.id, username: u.name, name: u.name, team_id: CONSOLE_TEAM.id });
const team = { id: CONSOLE_TEAM.id, domain: CONSOLE_TEAM.domain };

export function slashCommandBody(f: {
  command: string;
  text: string;
  user: ConsoleUser;
  channel: ConsoleChannel;
  responseUrl: string;
  triggerId: string;
}): Obj {
  return {
    token: "console",
    team_id: CONSOLE_TEAM.id,
    team_domain: CONSOLE_TEAM.domain,
    channel_id: f.channel.id,
    channel_name: f.channel.name,
    user_id: f.user.id,
    user_name: f.user.name,
    command: f.command,
    text: f.text,
    api_app_id: CONSOLE_APP_ID,
    is_enterprise_install: "false",
    response_url: f.responseUrl,
    trigger_id: f.triggerId,
  };
}

/** The action object of a block_actions payload for a clicked button or a chosen option. */
export function actionOf(element: Obj, blockId: string, chosen?: Obj): Obj {
  const base: Obj = {
    type: element.type,
    action_id: element.action_id,
    block_id: blockId,
    action_ts: (Date.now() / 1000).toFixed(6),
  };
  if (element.type === "button") {
    return {
      ...base,
      text: element.text,
      ...(element.value !== undefined ? { value: element.value } : {}),
      ...(element.style !== undefined ? { style: element.style } : {}),
    };
  }
  if (element.type === "overflow" || element.type === "static_select" || element.type === "external_select") {
    return { ...base, selected_option: chosen ?? null };
  }
  return base;
}

export interface MessageSource {
  channel: ConsoleChannel;
  ts: string;
  ephemeral: boolean;
  text: string;
  blocks: unknown[];
  responseUrl: string;
}

export interface ViewSource {
  view: Obj;
}

export function blockActionsBody(f: {
  user: ConsoleUser;
  action: Obj;
  triggerId: string;
  source: { message: MessageSource } | ViewSource;
}): Obj {
  const common = {
    type: "block_actions",
    user: userRef(f.user),
    api_app_id: CONSOLE_APP_ID,
    token: "console",
    trigger_id: f.triggerId,
    team,
    enterprise: null,
    is_enterprise_install: false,
    actions: [f.action],
  };
  if ("message" in f.source) {
    const m = f.source.message;
    return {
      ...common,
      container: { type: "message", message_ts: m.ts, channel_id: m.channel.id, is_ephemeral: m.ephemeral },
      channel: { id: m.channel.id, name: m.channel.name },
      // Slack sends the message itself only for messages everyone sees.
      ...(m.ephemeral
        ? {}
        : {
            message: {
              type: "message",
              ts: m.ts,
              user: CONSOLE_BOT.userId,
              bot_id: CONSOLE_BOT.botId,
              text: m.text,
              blocks: m.blocks,
            },
          }),
      state: { values: {} },
      response_url: m.responseUrl,
    };
  }
  const view = f.source.view;
  return {
    ...common,
    container: { type: "view", view_id: view.id },
    view,
  };
}

export function viewSubmissionBody(f: { user: ConsoleUser; view: Obj; values: Obj; triggerId: string }): Obj {
  return {
    type: "view_submission",
    team,
    user: userRef(f.user),
    api_app_id: CONSOLE_APP_ID,
    token: "console",
    trigger_id: f.triggerId,
    view: { ...f.view, state: { values: f.values } },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
}

let eventCounter = 0;

export function appHomeOpenedBody(f: { user: ConsoleUser; channelId: string; view?: Obj }): Obj {
  const now = Date.now() / 1000;
  eventCounter += 1;
  return {
    token: "console",
    team_id: CONSOLE_TEAM.id,
    api_app_id: CONSOLE_APP_ID,
    event: {
      type: "app_home_opened",
      user: f.user.id,
      channel: f.channelId,
      tab: "home",
      event_ts: now.toFixed(6),
      ...(f.view ? { view: f.view } : {}),
    },
    type: "event_callback",
    event_id: `Ev0CONSOLE${eventCounter}`,
    event_time: Math.floor(now),
    authorizations: [
      {
        enterprise_id: null,
        team_id: CONSOLE_TEAM.id,
        user_id: CONSOLE_BOT.userId,
        is_bot: true,
        is_enterprise_install: false,
      },
    ],
    is_ext_shared_channel: false,
  };
}

/** A block_suggestion: what Slack sends while someone types in an external_select (a picker). */
export function blockSuggestionBody(f: {
  user: ConsoleUser;
  actionId: string;
  blockId: string;
  value: string;
  source: { channel: ConsoleChannel; ts: string } | ViewSource;
}): Obj {
  const common = {
    type: "block_suggestion",
    user: userRef(f.user),
    api_app_id: CONSOLE_APP_ID,
    token: "console",
    team,
    enterprise: null,
    is_enterprise_install: false,
    action_id: f.actionId,
    block_id: f.blockId,
    value: f.value,
  };
  if ("view" in f.source) {
    const view = f.source.view;
    return { ...common, container: { type: "view", view_id: view.id }, view };
  }
  const { channel, ts } = f.source;
  return {
    ...common,
    container: { type: "message", message_ts: ts, channel_id: channel.id, is_ephemeral: true },
    channel: { id: channel.id, name: channel.name },
  };
}
