/**
 * The read–eval–print loop: typed lines become slash commands, clicks, modal submissions and App Home
 * openings sent through the console receiver; meta-commands switch user and channel. After each line
 * it waits until the app has finished answering, so piped input gives the same output every time.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../../src/log.js";
import type { Simulator } from "../simulator/index.js";
import {
  actionOf,
  appHomeOpenedBody,
  blockActionsBody,
  blockSuggestionBody,
  slashCommandBody,
  viewSubmissionBody,
} from "./bodies.js";
import type { ConsoleClock } from "./console-clock.js";
import { type InputItem, type LineInput, WAKE } from "./input.js";
import type { ConsoleReceiver } from "./receiver.js";
import { type Paint, PLAIN, textOf } from "./render.js";
import type { ConsoleView, Control, Screen } from "./screen.js";
import { runSimClock, runSimCommand, SIM_HELP } from "./sim-commands.js";
import type { StandIn } from "./standin.js";
import type { ConsoleChannel, ConsoleUser, World } from "./world.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The console's own commands, for the banner and /help. */
export const META_HELP = [
  "  /edge <text>       run the slash command, e.g. /edge apps, /edge help",
  "  <n> or /click <n>  press button or menu [n] (confirmation dialogs ask y/N; a search menu: type to filter, pick by number)",
  "  /as <user>         act as someone else: alice (admin), bob (member), carol (owner)",
  "  /in #<channel>     switch channel (created on first use)",
  "  /rename #<name>    rename the current channel (what was posted there stays)",
  "  /home              open the App Home of the current user",
  "  /users             list the simulated users",
  "  /cancel            (in a modal) close it without submitting",
  "  /sim               stage faults in the simulator: /sim attack <zone>, /sim fail <app>, /sim calm, /sim clock +30m, /sim dashboard",
  "  /help              this list        /quit  leave (or Ctrl+D)",
];

export interface SessionOptions {
  world: World;
  screen: Screen;
  receiver: ConsoleReceiver;
  standIn: StandIn;
  input: LineInput;
  logger: Logger;
  /** The built-in simulator, when the Edge API is simulated (`/sim` stages faults in it). */
  sim?: Simulator | undefined;
  /** The console's own clock, when it may be moved (`/sim clock`): with the simulator, unless a test gave one. */
  clock?: ConsoleClock | undefined;
  paint?: Paint;
  /** How long the app must have been silent before the next line is read. Default 100 ms. */
  quietMs?: number;
  /** Longest wait for the app before reading the next line: default 2 s in a terminal, 2 min from a pipe. */
  maxWaitMs?: number;
}

type FieldAnswer = { state: Obj } | "cancel" | "quit";

const SECRET_LABEL = /key|token|secret|password/i;

export class Session {
  user: ConsoleUser;
  channel: ConsoleChannel;
  private quitting = false;
  private readonly paint: Paint;

  constructor(private readonly o: SessionOptions) {
    const first = o.world.users[0];
    const general = o.world.channels[0];
    if (!first || !general) throw new Error("The console needs at least one user and one channel.");
    this.user = first;
    this.channel = general;
    this.paint = o.paint ?? PLAIN;
  }

  private get names() {
    return {
      userName: (id: string) => this.o.world.userName(id),
      channelName: (id: string) => this.o.world.channelName(id),
    };
  }

  private print(text: string): void {
    this.o.input.print(text);
  }

  private note(text: string): void {
    this.print(this.paint.dim(text));
  }

  prompt(): string {
    return `${this.user.name} in #${this.channel.name}> `;
  }

  /** Run until /quit or the end of input. */
  async run(): Promise<void> {
    while (!this.quitting) {
      const modal = this.o.screen.takePendingFill();
      if (modal) {
        await this.fillModal(modal);
        await this.settle();
        continue;
      }
      const item = await this.o.input.next(this.prompt());
      if (item === WAKE) continue;
      if (item === null) break;
      await this.handle(item);
      await this.settle();
    }
  }

  /** Wait until no event is being processed and the stand-in has been quiet for a moment. */
  async settle(): Promise<void> {
    const quietMs = this.o.quietMs ?? 100;
    const maxWaitMs = this.o.maxWaitMs ?? (this.o.input.tty ? 2_000 : 120_000);
    const started = Date.now();
    while (Date.now() - started < maxWaitMs) {
      const quiet = Date.now() - this.o.standIn.lastActivity >= quietMs;
      if (this.o.receiver.busy === 0 && this.o.standIn.busy === 0 && quiet) return;
      await sleep(10);
    }
  }

  async handle(raw: string): Promise<void> {
    const line = raw.trim();
    if (!line) return;
    if (/^\d+$/.test(line)) return this.click(Number(line));
    const word = line.split(/\s+/)[0] ?? "";
    const arg = line.slice(word.length).trim();
    switch (word.toLowerCase()) {
      case "/click":
        if (!/^\d+$/.test(arg)) return this.note("Which button? For example: /click 1 (or just 1).");
        return this.click(Number(arg));
      case "/as":
        return this.switchUser(arg);
      case "/in":
        return this.switchChannel(arg);
      case "/rename": {
        if (!arg) return this.note("To what? For example: /rename #incident-42.");
        const refused = this.o.world.renameChannel(this.channel.id, arg);
        return this.note(refused ?? `This channel is #${this.channel.name} now.`);
      }
      case "/home":
        return this.openHome();
      case "/users":
        return this.print(this.o.world.users.map((u) => `  ${this.o.world.describeUser(u)}`).join("\n"));
      case "/help":
        return this.print(
          [
            "The console's commands:",
            ...META_HELP,
            "The simulator's fault plan:",
            ...SIM_HELP,
            "The bot's commands: /edge help",
          ].join("\n"),
        );
      case "/sim":
        if (/^clock\b/i.test(arg))
          return this.note(await runSimClock(this.o.sim, this.o.clock, arg.slice(5)));
        return this.note(runSimCommand(this.o.sim, arg));
      case "/quit":
      case "/exit":
        this.quitting = true;
        return;
      case "/cancel":
        if (this.o.screen.modals.length > 0) return this.o.screen.closeModal();
        return this.note("No modal is open.");
      case "/edge":
        return this.slashCommand("/edge", arg);
      default:
        if (word.startsWith("/"))
          return this.note(
            `${word} is not a command here: edgeops answers /edge (try /edge help); /help lists the console's commands.`,
          );
        return this.note(
          "Only slash commands reach edgeops: try /edge help, or /help for the console's commands.",
        );
    }
  }

  private switchUser(name: string): void {
    const u = name ? this.o.world.findUser(name) : undefined;
    if (!u) {
      const known = this.o.world.users.map((x) => x.name).join(", ");
      this.note(name ? `There is no user "${name}". Users: ${known}.` : `As whom? Users: ${known}.`);
      return;
    }
    this.user = u;
    this.note(`You are now ${this.o.world.describeUser(u)}.`);
  }

  private switchChannel(name: string): void {
    const c = name ? this.o.world.channelNamed(name) : undefined;
    if (!c) {
      this.note("Which channel? For example: /in #incident-42 (letters, digits, - and _).");
      return;
    }
    this.channel = c;
    this.note(`You are now in #${c.name}.`);
  }

  private async slashCommand(command: string, text: string): Promise<void> {
    const { screen, standIn, receiver } = this.o;
    const body = slashCommandBody({
      command,
      text,
      user: this.user,
      channel: this.channel,
      responseUrl: standIn.responseUrl({ channelId: this.channel.id, userId: this.user.id }),
      triggerId: screen.newTrigger(this.user.id),
    });
    const ack = await receiver.dispatch(body).ack;
    // Slack shows an acknowledgement that carries a message as an answer of its own.
    const message = typeof ack === "string" ? { text: ack } : isObj(ack) ? ack : undefined;
    if (message && (message.text || message.blocks)) {
      screen.postMessage({
        channelId: this.channel.id,
        text: String(message.text ?? ""),
        blocks: arr(message.blocks),
        ephemeralTo: message.response_type === "in_channel" ? undefined : this.user.id,
      });
    }
  }

  private openHome(): void {
    const home = this.o.screen.homes.get(this.user.id);
    this.o.receiver.dispatch(
      appHomeOpenedBody({
        user: this.user,
        channelId: this.o.world.dmOf(this.user.id),
        ...(home ? { view: home.view } : {}),
      }),
    );
  }

  private async ask(prompt: string, mask = false): Promise<InputItem> {
    let item: InputItem;
    do item = await this.o.input.next(prompt, { mask });
    while (item === WAKE);
    return item;
  }

  async click(n: number): Promise<void> {
    const { screen, world, standIn, receiver } = this.o;
    const control = screen.controls.get(n);
    if (!control) return this.note(`There is no button [${n}] on screen.`);
    const owner = "message" in control.owner ? control.owner.message.ephemeralTo : control.owner.view.userId;
    if (owner !== undefined && owner !== this.user.id) {
      const name = world.userName(owner);
      return this.note(`Only ${name} can see [${n}]: /as ${name} first.`);
    }
    const { element } = control;
    if (isObj(element.confirm) && !(await this.confirm(element.confirm))) {
      return this.note("Cancelled: nothing was sent.");
    }
    let chosen: Obj | undefined;
    if (element.type === "external_select") {
      const source =
        "message" in control.owner
          ? {
              channel: {
                id: control.owner.message.channelId,
                name: world.channelName(control.owner.message.channelId),
              },
              ts: control.owner.message.ts,
            }
          : { view: control.owner.view.view };
      const picked = await this.search(element, control.blockId, source);
      if (picked === "quit") {
        this.quitting = true;
        return;
      }
      if (!picked) return this.note("Nothing chosen.");
      chosen = picked;
    } else if (element.type !== "button") {
      chosen = await this.choose(control);
      if (!chosen) return;
    }
    if (typeof element.url === "string") this.note(`(Slack would open ${element.url})`);
    const action = actionOf(element, control.blockId, chosen);
    const triggerId = screen.newTrigger(this.user.id);
    const body =
      "message" in control.owner
        ? blockActionsBody({
            user: this.user,
            action,
            triggerId,
            source: {
              message: {
                channel: {
                  id: control.owner.message.channelId,
                  name: world.channelName(control.owner.message.channelId),
                },
                ts: control.owner.message.ts,
                ephemeral: control.owner.message.ephemeralTo !== undefined,
                text: control.owner.message.text,
                blocks: control.owner.message.blocks,
                responseUrl: standIn.responseUrl({
                  channelId: control.owner.message.channelId,
                  userId: this.user.id,
                  message: control.owner.message,
                }),
              },
            },
          })
        : blockActionsBody({ user: this.user, action, triggerId, source: { view: control.owner.view.view } });
    await receiver.dispatch(body).ack;
  }

  private async confirm(dialog: Obj): Promise<boolean> {
    const ctx = this.names;
    const yes = textOf(dialog.confirm, ctx) || "Yes";
    const no = textOf(dialog.deny, ctx) || "Cancel";
    this.print(
      [
        this.paint.bold(`? ${textOf(dialog.title, ctx) || "Are you sure?"}`),
        ...textOf(dialog.text, ctx)
          .split("\n")
          .map((l) => `  ${l}`),
        this.paint.dim(`  y = ${yes}, n = ${no}`),
      ].join("\n"),
    );
    const answer = await this.ask("Confirm? [y/N] ");
    return typeof answer === "string" && /^(y|yes)$/i.test(answer.trim());
  }

  private async choose(control: Control): Promise<Obj | undefined> {
    const ctx = this.names;
    const options = [
      ...arr(control.element.options),
      ...arr(control.element.option_groups).flatMap((g) => (isObj(g) ? arr(g.options) : [])),
    ].filter(isObj);
    if (options.length === 0) {
      this.note("This menu has no options to choose from.");
      return undefined;
    }
    this.print(options.map((o, i) => `  ${i + 1}) ${textOf(o.text, ctx)}`).join("\n"));
    const answer = await this.ask(`Choose 1-${options.length}: `);
    const picked = typeof answer === "string" ? options[Number(answer.trim()) - 1] : undefined;
    if (!picked) this.note("Nothing chosen.");
    return picked;
  }

  /**
   * A search menu (external_select): what is typed goes to the app as Slack's block_suggestion, the
   * options it answers are listed by number; a number picks one, anything else searches again.
   */
  private async search(
    element: Obj,
    blockId: string,
    source: Parameters<typeof blockSuggestionBody>[0]["source"],
    first?: string,
  ): Promise<Obj | "quit" | undefined> {
    const ctx = this.names;
    let options: Obj[] = [];
    let prompt = "Type part of a name to search (Enter lists the first ones, /cancel stops): ";
    let typed = first;
    while (true) {
      const item = typed ?? (await this.ask(prompt));
      typed = undefined;
      if (item === null) return undefined;
      const text = String(item).trim();
      if (text === "/cancel") return undefined;
      if (text === "/quit") return "quit";
      if (/^\d+$/.test(text) && options.length > 0) {
        const picked = options[Number(text) - 1];
        if (picked) return picked;
        this.note(`Choose 1 to ${options.length}, or type something else to search.`);
        continue;
      }
      const answer = await this.o.receiver.dispatch(
        blockSuggestionBody({
          user: this.user,
          actionId: String(element.action_id ?? ""),
          blockId,
          value: text,
          source,
        }),
      ).ack;
      const lines: string[] = [];
      options = [];
      const list = (group: Obj | undefined, items: unknown[]) => {
        if (group) lines.push(this.paint.bold(`  ${textOf(group.label, ctx)}`));
        for (const o of items.filter(isObj)) {
          options.push(o);
          lines.push(`  ${options.length}) ${textOf(o.text, ctx)}`);
        }
      };
      if (isObj(answer)) {
        list(undefined, arr(answer.options));
        for (const g of arr(answer.option_groups).filter(isObj)) list(g, arr(g.options));
      }
      if (options.length === 0) {
        this.note("No matches: type something else, or /cancel.");
        continue;
      }
      this.print(lines.join("\n"));
      prompt = `Choose 1-${options.length}, or type to search again: `;
    }
  }

  /** Fill in a modal field by field, submit it, and deal with what the app answers. */
  async fillModal(v: ConsoleView): Promise<void> {
    const { screen, world, receiver } = this.o;
    const user = world.userById(v.userId) ?? this.user;
    this.note("Fill in the modal: Enter skips an optional field, /cancel closes it.");
    while (screen.modals.includes(v)) {
      const values: Record<string, Obj> = {};
      let index = 0;
      for (const block of arr(v.view.blocks)) {
        if (!isObj(block) || block.type !== "input" || !isObj(block.element)) continue;
        index += 1;
        const answer = await this.askField(block, index);
        if (answer === "quit") {
          this.quitting = true;
          return;
        }
        if (answer === "cancel") {
          screen.closeModal();
          return;
        }
        const blockId = String(block.block_id ?? `input${index}`);
        const actionId = String(block.element.action_id ?? `action${index}`);
        values[blockId] = { ...(values[blockId] ?? {}), [actionId]: answer.state };
      }
      const ack = await receiver.dispatch(
        viewSubmissionBody({ user, view: v.view, values, triggerId: screen.newTrigger(user.id) }),
      ).ack;
      const response = isObj(ack) ? ack : {};
      switch (response.response_action) {
        case "errors": {
          this.showErrors(v, isObj(response.errors) ? response.errors : {});
          this.note("Correct the fields and submit again, or /cancel.");
          continue;
        }
        case "update":
          if (isObj(response.view)) screen.updateView(v, response.view);
          return;
        case "push":
          if (isObj(response.view)) screen.openModal(user.id, response.view, true);
          return;
        case "clear":
          screen.closeModal(true);
          return;
        default:
          screen.closeModal();
          return;
      }
    }
  }

  private showErrors(v: ConsoleView, errors: Obj): void {
    const ctx = this.names;
    const inputs = arr(v.view.blocks).filter((b): b is Obj => isObj(b) && b.type === "input");
    const lines = Object.entries(errors).map(([blockId, message]) => {
      const i = inputs.findIndex((b) => b.block_id === blockId);
      const label = i === -1 ? blockId : `{${i + 1}} ${textOf(inputs[i]?.label, ctx)}`;
      return this.paint.danger(`! ${label}: ${String(message)}`);
    });
    this.print(lines.join("\n"));
  }

  private async askField(block: Obj, n: number): Promise<FieldAnswer> {
    const ctx = this.names;
    const element = block.element as Obj;
    const type = String(element.type);
    const label = textOf(block.label, ctx);
    const optional = block.optional === true;
    const options = [
      ...arr(element.options),
      ...arr(element.option_groups).flatMap((g) => (isObj(g) ? arr(g.options) : [])),
    ].filter(isObj);
    const multi = type === "checkboxes" || type.startsWith("multi_");
    const kind =
      options.length > 0
        ? multi
          ? "numbers, comma-separated"
          : "a number"
        : type.includes("users_select")
          ? multi
            ? "user names"
            : "a user name"
          : type === "external_select"
            ? "type to search"
            : type.includes("conversations_select") || type.includes("channels_select")
              ? "#channel"
              : type === "datepicker"
                ? "YYYY-MM-DD"
                : type === "timepicker"
                  ? "HH:MM"
                  : undefined;
    const prompt = `{${n}} ${label}${optional ? " (optional)" : ""}${kind ? ` [${kind}]` : ""}: `;
    const mask = SECRET_LABEL.test(label) || SECRET_LABEL.test(String(element.action_id ?? ""));

    while (true) {
      const item = await this.ask(prompt, mask);
      if (item === null) return "cancel";
      const text = String(item).trim();
      if (text === "/cancel") return "cancel";
      if (text === "/quit") return "quit";
      if (type === "external_select") {
        // A search menu in a modal: what was typed is the first search.
        const viewOf = this.o.screen.modals.at(-1)?.view ?? {};
        const picked = await this.search(element, String(block.block_id ?? ""), { view: viewOf }, text);
        if (picked === "quit") return "quit";
        if (!picked) {
          if (optional) return { state: { type, selected_option: null } };
          this.note("This field is required.");
          continue;
        }
        return { state: { type, selected_option: picked } };
      }
      const parsed = this.parseField(type, element, options, text, multi);
      if (typeof parsed === "string") {
        this.note(parsed);
        continue;
      }
      if (!optional && parsed.empty) {
        this.note("This field is required.");
        continue;
      }
      return { state: { type, ...parsed.state } };
    }
  }

  /** A typed answer as the field's `state.values` entry, or a sentence saying what is wrong. */
  private parseField(
    type: string,
    element: Obj,
    options: Obj[],
    text: string,
    multi: boolean,
  ): { state: Obj; empty: boolean } | string {
    const { world } = this.o;
    const words = text.split(/[\s,]+/).filter(Boolean);
    if (options.length > 0) {
      const picked: Obj[] = [];
      for (const w of words) {
        const o = /^\d+$/.test(w) ? options[Number(w) - 1] : undefined;
        if (!o) return `Choose by number, 1 to ${options.length}.`;
        picked.push(o);
      }
      if (multi) {
        const initial = arr(element.initial_options).filter(isObj);
        const chosen = words.length > 0 ? picked : initial;
        return { state: { selected_options: chosen }, empty: chosen.length === 0 };
      }
      if (picked.length > 1) return "Choose one.";
      const one = picked[0] ?? (isObj(element.initial_option) ? element.initial_option : null);
      return { state: { selected_option: one }, empty: one === null };
    }
    if (type.includes("users_select")) {
      const ids: string[] = [];
      for (const w of words) {
        const u = world.findUser(w);
        if (!u) return `There is no user "${w}". Users: ${world.users.map((x) => x.name).join(", ")}.`;
        ids.push(u.id);
      }
      return multi
        ? { state: { selected_users: ids }, empty: ids.length === 0 }
        : { state: { selected_user: ids[0] ?? null }, empty: ids.length === 0 };
    }
    if (type.includes("conversations_select") || type.includes("channels_select")) {
      const ids: string[] = [];
      for (const w of words) {
        const c = world.channelNamed(w);
        if (!c) return `"${w}" is not a channel name.`;
        ids.push(c.id);
      }
      const key = type.includes("channels") ? "channel" : "conversation";
      return multi
        ? { state: { [`selected_${key}s`]: ids }, empty: ids.length === 0 }
        : { state: { [`selected_${key}`]: ids[0] ?? null }, empty: ids.length === 0 };
    }
    if (type === "datepicker") {
      const date = text || (typeof element.initial_date === "string" ? element.initial_date : "");
      if (date && !/^\d{4}-\d{2}-\d{2}$/.test(date)) return "Type the date as YYYY-MM-DD.";
      return { state: { selected_date: date || null }, empty: !date };
    }
    if (type === "timepicker") {
      const time = text || (typeof element.initial_time === "string" ? element.initial_time : "");
      if (time && !/^\d{2}:\d{2}$/.test(time)) return "Type the time as HH:MM.";
      return { state: { selected_time: time || null }, empty: !time };
    }
    const value = text || (typeof element.initial_value === "string" ? element.initial_value : "");
    if (type === "number_input" && value) {
      const ok = element.is_decimal_allowed === true ? /^-?\d+(\.\d+)?$/ : /^-?\d+$/;
      if (!ok.test(value)) return "Type a number.";
    }
    const max = typeof element.max_length === "number" ? element.max_length : undefined;
    if (max !== undefined && value.length > max) return `At most ${max} characters.`;
    return { state: { value: value || null }, empty: !value };
  }
}
