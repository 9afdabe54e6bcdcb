/**
 * What the person at the keyboard sees: every message the app posted (in which channel, ephemeral to
 * whom, replaced or deleted since), the open modals, each user's App Home, and a numbered list of the
 * buttons and menus on screen. The Slack stand-in changes it; the session reads it.
 */
import {
  type Paint,
  PLAIN,
  type RenderContext,
  renderBlocks,
  renderMessageBody,
  renderModal,
} from "./render.js";
import { CONSOLE_BOT, type World } from "./world.js";

type Obj = Record<string, unknown>;

export interface ConsoleMessage {
  readonly seq: number;
  readonly channelId: string;
  readonly ts: string;
  /** The only user who sees it; undefined for messages everyone in the channel sees. */
  ephemeralTo: string | undefined;
  threadTs: string | undefined;
  text: string;
  blocks: unknown[];
  deleted: boolean;
  controls: number[];
}

export interface ConsoleView {
  readonly id: string;
  readonly type: "modal" | "home";
  readonly userId: string;
  view: Obj;
  controls: number[];
}

export type ControlOwner = { message: ConsoleMessage } | { view: ConsoleView };

export interface Control {
  readonly n: number;
  readonly element: Obj;
  readonly blockId: string;
  readonly owner: ControlOwner;
}

export interface ResponseUrlContext {
  channelId: string;
  userId: string;
  /**
   * The message replace_original / delete_original act on: the one whose button was clicked, or, for a
   * command's response_url, the last message posted through it (as Slack does for a placeholder).
   */
  message?: ConsoleMessage;
}

export interface ScreenOutput {
  print(lines: readonly string[]): void;
}

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A modal the person must fill in: it has inputs and a submit button. */
export function isFillable(view: Obj): boolean {
  return (
    Boolean(view.submit) &&
    Array.isArray(view.blocks) &&
    view.blocks.some((b) => isObj(b) && b.type === "input")
  );
}

export class Screen {
  readonly messages: ConsoleMessage[] = [];
  readonly controls = new Map<number, Control>();
  /** Open modals, the top one last. */
  readonly modals: ConsoleView[] = [];
  readonly homes = new Map<string, ConsoleView>();
  private readonly responseUrls = new Map<string, ResponseUrlContext>();
  private readonly triggers = new Map<string, string>();
  private pending: ConsoleView | undefined;
  private seq = 0;
  private tsCounter = Math.floor(Date.now() / 1000);
  private idCounter = 0;
  /** Called when a modal that must be filled in opens (to wake a waiting prompt). */
  onModal: () => void = () => undefined;

  constructor(
    readonly world: World,
    private readonly out: ScreenOutput,
    private readonly paint: Paint = PLAIN,
  ) {}

  // ---- ids handed to the app ------------------------------------------------------------------

  newResponseUrl(baseUrl: string, ctx: ResponseUrlContext): string {
    const id = `r${++this.idCounter}${Math.random().toString(36).slice(2, 8)}`;
    this.responseUrls.set(id, ctx);
    return `${baseUrl}/response/${id}`;
  }

  responseContext(id: string): ResponseUrlContext | undefined {
    return this.responseUrls.get(id);
  }

  newTrigger(userId: string): string {
    const id = `${++this.idCounter}.${Date.now()}.console${Math.random().toString(36).slice(2, 10)}`;
    this.triggers.set(id, userId);
    return id;
  }

  triggerUser(triggerId: string): string | undefined {
    return this.triggers.get(triggerId);
  }

  private nextTs(): string {
    this.tsCounter += 1;
    return `${this.tsCounter}.000100`;
  }

  // ---- controls -------------------------------------------------------------------------------

  private freeControls(numbers: number[]): void {
    for (const n of numbers) this.controls.delete(n);
    numbers.length = 0;
  }

  private allocate(owner: ControlOwner, list: number[]) {
    return (element: Obj, blockId: string): number | undefined => {
      const interactive = ["button", "overflow", "static_select", "external_select"].includes(
        String(element.type),
      );
      if (!interactive) return undefined;
      let n = 1;
      while (this.controls.has(n)) n++;
      this.controls.set(n, { n, element, blockId, owner });
      list.push(n);
      return n;
    };
  }

  private context(owner?: ControlOwner, list?: number[]): RenderContext {
    const inputs: Obj[] = [];
    return {
      userName: (id) => this.world.userName(id),
      channelName: (id) => this.world.channelName(id),
      paint: this.paint,
      ...(owner && list ? { control: this.allocate(owner, list) } : {}),
      input: (block) => {
        inputs.push(block);
        return inputs.length;
      },
    };
  }

  // ---- messages -------------------------------------------------------------------------------

  private heading(m: ConsoleMessage, note?: string): string {
    const parts = [`#${this.world.channelName(m.channelId)}`, CONSOLE_BOT.name];
    if (m.threadTs) parts.push("in thread");
    if (m.ephemeralTo) parts.push(`only visible to ${this.world.userName(m.ephemeralTo)}`);
    if (note) parts.push(note);
    return this.paint.dim(`--- ${parts.join(" · ")} ---`);
  }

  private show(m: ConsoleMessage, note?: string): void {
    this.freeControls(m.controls);
    const body = renderMessageBody(m, this.context({ message: m }, m.controls));
    this.out.print([this.heading(m, note), ...body]);
  }

  postMessage(f: {
    channelId: string;
    text: string;
    blocks: unknown[];
    ephemeralTo?: string | undefined;
    threadTs?: string | undefined;
  }): ConsoleMessage {
    const m: ConsoleMessage = {
      seq: ++this.seq,
      channelId: f.channelId,
      ts: this.nextTs(),
      ephemeralTo: f.ephemeralTo,
      threadTs: f.threadTs,
      text: f.text,
      blocks: f.blocks,
      deleted: false,
      controls: [],
    };
    this.messages.push(m);
    this.show(m);
    return m;
  }

  findMessage(channelId: string, ts: string): ConsoleMessage | undefined {
    return this.messages.find((m) => !m.deleted && m.channelId === channelId && m.ts === ts);
  }

  updateMessage(
    m: ConsoleMessage,
    f: { text: string; blocks: unknown[]; ephemeralTo?: string | undefined },
  ): void {
    m.text = f.text;
    m.blocks = f.blocks;
    if ("ephemeralTo" in f) m.ephemeralTo = f.ephemeralTo;
    this.show(m, "updated");
  }

  deleteMessage(m: ConsoleMessage): void {
    m.deleted = true;
    this.freeControls(m.controls);
    const parts = [
      `#${this.world.channelName(m.channelId)}`,
      `a message from ${CONSOLE_BOT.name} was deleted`,
    ];
    this.out.print([this.paint.dim(`--- ${parts.join(" · ")} ---`)]);
  }

  // ---- views ----------------------------------------------------------------------------------

  private newView(type: "modal" | "home", userId: string, view: Obj): ConsoleView {
    const id = `V0CONSOLE${++this.idCounter}`;
    return {
      id,
      type,
      userId,
      view: { ...view, id, hash: `h${this.idCounter}`, team_id: "T0CONSOLE" },
      controls: [],
    };
  }

  private showModal(v: ConsoleView, note?: string): void {
    this.freeControls(v.controls);
    const lines = renderModal(v.view, this.context({ view: v }, v.controls));
    if (note && lines[0]) lines[0] = `${lines[0]} ${this.paint.dim(`(${note})`)}`;
    this.out.print(lines);
    if (isFillable(v.view)) {
      this.pending = v;
      this.onModal();
    }
  }

  openModal(userId: string, view: Obj, push = false): ConsoleView {
    const v = this.newView("modal", userId, view);
    if (!push) {
      for (const old of this.modals) this.freeControls(old.controls);
      this.modals.length = 0;
    }
    this.modals.push(v);
    this.showModal(v, push ? "pushed" : undefined);
    return v;
  }

  findView(viewId: string | undefined, externalId: string | undefined): ConsoleView | undefined {
    const all = [...this.modals, ...this.homes.values()];
    return all.find(
      (v) => (viewId !== undefined && v.id === viewId) || (externalId && v.view.external_id === externalId),
    );
  }

  updateView(v: ConsoleView, view: Obj): void {
    v.view = { ...view, id: v.id, hash: `h${++this.idCounter}`, team_id: "T0CONSOLE" };
    if (v.type === "home") this.showHome(v, "updated");
    else this.showModal(v, "updated");
  }

  /** Close the top modal (or all of them); what remains on top is shown again. */
  closeModal(all = false): void {
    const closing = all ? this.modals.splice(0) : this.modals.splice(-1);
    for (const v of closing) this.freeControls(v.controls);
    if (this.pending && closing.includes(this.pending)) this.pending = undefined;
    this.out.print([
      this.paint.dim(all || this.modals.length === 0 ? "(modal closed)" : "(back to the previous modal)"),
    ]);
    const top = this.modals.at(-1);
    if (top) this.showModal(top);
  }

  /** The modal waiting to be filled in, once. */
  takePendingFill(): ConsoleView | undefined {
    const v = this.pending;
    this.pending = undefined;
    return v && this.modals.includes(v) ? v : undefined;
  }

  private showHome(v: ConsoleView, note?: string): void {
    this.freeControls(v.controls);
    const title = `=== App Home of ${this.world.userName(v.userId)}${note ? ` (${note})` : ""} ===`;
    const body = renderBlocks(
      Array.isArray(v.view.blocks) ? v.view.blocks : [],
      this.context({ view: v }, v.controls),
    );
    this.out.print([this.paint.bold(title), ...body]);
  }

  publishHome(userId: string, view: Obj): ConsoleView {
    const existing = this.homes.get(userId);
    if (existing) {
      existing.view = { ...view, id: existing.id, hash: `h${++this.idCounter}`, team_id: "T0CONSOLE" };
      this.showHome(existing);
      return existing;
    }
    const v = this.newView("home", userId, view);
    this.homes.set(userId, v);
    this.showHome(v);
    return v;
  }

  note(text: string): void {
    this.out.print([this.paint.dim(text)]);
  }
}
