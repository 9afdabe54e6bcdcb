import type { WebClient } from "@slack/web-api";
import type { Deps } from "../../deps.js";
import type { Logger } from "../../log.js";
import type { PickerSource } from "../../services/pickers.js";
import type { AdminDirectory } from "../admin.js";
import type { Reply } from "../blocks/reply.js";
import type { CardRedraws } from "../card-redraws.js";
import type { SlackClientFor } from "../transport/clients.js";

/** What the Slack layer adds to the shared dependencies. */
export interface SlackEnv {
  readonly deps: Deps;
  readonly admins: AdminDirectory;
  /** A Web API client for work that does not start from a Slack request. */
  readonly clientFor: SlackClientFor;
  /** A Web API client with the same options for another token (a workflow step's own token). */
  readonly clientWithToken: (token: string) => WebClient;
  /** Approval cards' redraws in this process, one at a time per card (src/slack/change-requests.ts updateCard). */
  readonly cardRedraws: CardRedraws;
}

export interface CommandContext {
  readonly env: SlackEnv;
  readonly client: WebClient;
  readonly logger: Logger;
  readonly teamId: string;
  readonly userId: string;
  readonly channelId: string;
  readonly triggerId: string | undefined;
  readonly args: readonly string[];
  readonly isPublic: boolean;
  /**
   * Post `reply` at once as a placeholder that the command's answer then replaces (slash commands
   * only; absent when the command is re-run, e.g. by Share in channel).
   */
  readonly placeholder?: (reply: Reply) => Promise<void>;
}

export interface Subcommand {
  readonly name: string;
  readonly usage: string;
  readonly summary: string;
  readonly examples: readonly string[];
  /**
   * Build the answer. Returns null when the subcommand answered some other way (a modal opened).
   * Throws UserError for bad arguments; any error becomes one ephemeral sentence.
   */
  run(ctx: CommandContext): Promise<Reply | null>;
  /**
   * Whether "Share in channel" may re-run these arguments publicly (default yes). Commands that change
   * something (create, remove, request) say no: sharing must never do the change a second time.
   */
  shareable?(args: readonly string[]): boolean;
  /**
   * Where the command takes an id a picker can supply: typed without it, the command answers with a
   * picker whose choice runs it with the id in place.
   */
  readonly picker?: PickerArg;
}

export interface PickerArg {
  readonly source: PickerSource;
  /**
   * The words of the command the picker completes, when they are not the words typed (`/edge ratelimit`
   * alone picks a zone for `ratelimit zone <id>`); `missingAt` reads these. Default: the words typed.
   */
  completes?(args: readonly string[]): readonly string[];
  /** The index in `args` where the id is missing, or undefined when the words typed already hold one. */
  missingAt(args: readonly string[]): number | undefined;
}
