/**
 * The simulated workspace: its team, people (with their admin flags, which users.info answers) and
 * channels. Console only; none of this ever reaches a real Slack.
 */

export const CONSOLE_TEAM = { id: "T0CONSOLE", domain: "console", name: "Local console" } as const;
export const CONSOLE_APP_ID = "A0CONSOLE";
export const CONSOLE_BOT = { userId: "UEDGEOPS", botId: "BEDGEOPS", name: "edgeops" } as const;
/** A fixed token the app sends to the in-process Slack stand-in. Not a secret: it opens nothing. */
export const CONSOLE_BOT_TOKEN = "xoxb-console";

export interface ConsoleUser {
  id: string;
  name: string;
  realName: string;
  isAdmin: boolean;
  isOwner: boolean;
  tz: string;
}

export interface ConsoleChannel {
  id: string;
  name: string;
}

export const DEFAULT_USERS: readonly ConsoleUser[] = [
  {
    id: "U0ALICE",
    name: "alice",
    realName: "Alice Admin",
    isAdmin: true,
    isOwner: false,
    tz: "Europe/Amsterdam",
  },
  {
    id: "U0BOB",
    name: "bob",
    realName: "Bob Builder",
    isAdmin: false,
    isOwner: false,
    tz: "America/New_York",
  },
  { id: "U0CAROL", name: "carol", realName: "Carol Owner", isAdmin: false, isOwner: true, tz: "Asia/Tokyo" },
];

/** User groups (handle → members), answered by usergroups.users.list. */
export const DEFAULT_USERGROUPS: Readonly<Record<string, { id: string; members: readonly string[] }>> = {
  "edge-admins": { id: "S0EDGEADMINS", members: ["U0ALICE", "U0CAROL"] },
};

export class World {
  readonly users: ConsoleUser[];
  readonly channels: ConsoleChannel[] = [{ id: "C0GENERAL", name: "general" }];
  readonly usergroups = DEFAULT_USERGROUPS;
  /** Told when a channel is made or renamed (the console saves the names). */
  onChannelsChange: () => void = () => {};

  /** `channels`: those an earlier console on the same DATA_DIR had (#general first unless it was renamed). */
  constructor(users: readonly ConsoleUser[] = DEFAULT_USERS, channels?: readonly ConsoleChannel[]) {
    this.users = users.map((u) => ({ ...u }));
    if (channels !== undefined && channels.length > 0) this.channels = channels.map((c) => ({ ...c }));
  }

  userById(id: string): ConsoleUser | undefined {
    return this.users.find((u) => u.id === id);
  }

  /** By name (`bob`, `@bob`) or id (`U0BOB`), case-insensitive. */
  findUser(nameOrId: string): ConsoleUser | undefined {
    const wanted = nameOrId.replace(/^@/, "").toLowerCase();
    return this.users.find((u) => u.name === wanted || u.id.toLowerCase() === wanted);
  }

  userName(id: string): string {
    if (id === CONSOLE_BOT.userId) return CONSOLE_BOT.name;
    return this.userById(id)?.name ?? id;
  }

  channelById(id: string): ConsoleChannel | undefined {
    return this.channels.find((c) => c.id === id);
  }

  /** The channel called `name` (with or without #), created on first use like joining it. */
  channelNamed(name: string): ConsoleChannel | undefined {
    const wanted = name.replace(/^#/, "").toLowerCase();
    if (!/^[a-z0-9][a-z0-9_-]{0,79}$/.test(wanted)) return undefined;
    const existing = this.channels.find((c) => c.name === wanted);
    if (existing) return existing;
    let id = `C0${wanted.replace(/[^a-z0-9]/g, "").toUpperCase()}`.slice(0, 12);
    while (this.channels.some((c) => c.id === id)) id = `${id.slice(0, 11)}${this.channels.length}`;
    const channel = { id, name: wanted };
    this.channels.push(channel);
    this.onChannelsChange();
    return channel;
  }

  /** Renames a channel (its id stays, so what was posted there stays there); a sentence saying why not, or undefined. */
  renameChannel(id: string, name: string): string | undefined {
    const wanted = name.replace(/^#/, "").toLowerCase();
    if (!/^[a-z0-9][a-z0-9_-]{0,79}$/.test(wanted))
      return `"${name}" is not a channel name: letters, digits, - and _, e.g. /rename #incident-42.`;
    const channel = this.channelById(id);
    if (channel === undefined) return "Only a channel can be renamed, not a direct message.";
    if (this.channels.some((c) => c.name === wanted && c !== channel)) return `#${wanted} exists already.`;
    channel.name = wanted;
    this.onChannelsChange();
    return undefined;
  }

  /** The direct-message channel between the bot and a user. */
  dmOf(userId: string): string {
    return `D${userId}`;
  }

  /** A channel id, DM id or user id (chat.postMessage accepts a user id for a DM) as display text. */
  channelName(id: string): string {
    if (id.startsWith("D")) return `dm-${this.userName(id.slice(1))}`;
    if (id.startsWith("U") || id.startsWith("W")) return `dm-${this.userName(id)}`;
    return this.channelById(id)?.name ?? id;
  }

  describeUser(u: ConsoleUser): string {
    const role = u.isOwner ? "owner" : u.isAdmin ? "admin" : "member";
    return `${u.name} (${u.id}, ${role})`;
  }
}
