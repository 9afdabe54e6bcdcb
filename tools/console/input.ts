import { createInterface, type Interface } from "node:readline";
import type { Readable, Writable } from "node:stream";

/** Returned by `next()` when something other than a typed line needs attention (a modal opened). */
export const WAKE = Symbol("wake");
export type InputItem = string | null | typeof WAKE;

/**
 * Lines from the keyboard or a pipe, one at a time, and printing that keeps the prompt tidy.
 * In a terminal the prompt is readline's and output appearing while it waits is printed above it;
 * from a pipe lines are queued as they arrive and echoed after their prompt, so a transcript reads
 * like the session it was.
 */
export class LineInput {
  private readonly rl: Interface;
  private readonly queue: string[] = [];
  private waiter: ((item: InputItem) => void) | undefined;
  private ended = false;
  private prompting = false;
  private currentPrompt = "";
  /** Lines handed out by next() so far. */
  consumed = 0;

  constructor(
    input: Readable,
    private readonly output: Writable,
    readonly tty: boolean,
  ) {
    this.rl = tty
      ? createInterface({ input, output, terminal: true, historySize: 200 })
      : createInterface({ input, terminal: false, crlfDelay: Number.POSITIVE_INFINITY });
    this.rl.on("line", (line) => this.push(line));
    this.rl.on("close", () => {
      this.ended = true;
      this.settleWaiter(null);
    });
    if (tty) this.rl.on("SIGINT", () => this.rl.close());
  }

  private push(line: string): void {
    if (this.waiter) this.settleWaiter(line);
    else this.queue.push(line);
  }

  private settleWaiter(item: InputItem): void {
    const w = this.waiter;
    this.waiter = undefined;
    this.prompting = false;
    w?.(item);
  }

  /** The next line (null at end of input), or WAKE when `wake()` is called while waiting. */
  next(prompt: string, options: { mask?: boolean } = {}): Promise<InputItem> {
    const queued = this.queue.shift();
    if (queued !== undefined) {
      this.consumed += 1;
      if (!this.tty) this.echo(prompt, queued, options.mask === true);
      return Promise.resolve(queued);
    }
    if (this.ended) return Promise.resolve(null);
    this.currentPrompt = prompt;
    this.prompting = true;
    const unmask = this.tty && options.mask === true ? this.maskTyping(prompt) : undefined;
    if (this.tty) {
      this.rl.setPrompt(prompt);
      this.rl.prompt();
    }
    return new Promise<InputItem>((resolve) => {
      this.waiter = (item) => {
        unmask?.();
        if (typeof item === "string") this.consumed += 1;
        if (!this.tty && typeof item === "string") this.echo(prompt, item, options.mask === true);
        resolve(item);
      };
    });
  }

  /** Waiting for a line that has not arrived yet. */
  get waiting(): boolean {
    return this.waiter !== undefined && this.queue.length === 0;
  }

  /** Make a pending `next()` return WAKE (nothing happens when none is pending). */
  wake(): void {
    if (this.waiter) {
      if (this.tty) this.clearPromptLine();
      this.settleWaiter(WAKE);
    }
  }

  /**
   * Show `*` instead of what is typed (an API key pasted into a modal field) until the line is read.
   * Uses readline's internal writer when it has one; otherwise the field shows as typed.
   */
  private maskTyping(prompt: string): (() => void) | undefined {
    const rl = this.rl as unknown as { _writeToOutput?: (s: string) => void };
    const original = rl._writeToOutput;
    if (typeof original !== "function") return undefined;
    rl._writeToOutput = (s: string) => {
      if (s.startsWith(prompt)) original.call(rl, prompt + "*".repeat(s.length - prompt.length));
      else if (/^[\r\n]+$/.test(s)) original.call(rl, s);
      else original.call(rl, "*".repeat(s.length));
    };
    return () => {
      rl._writeToOutput = original;
    };
  }

  private echo(prompt: string, line: string, mask: boolean): void {
    this.output.write(
      `${prompt}${mask && line && !line.startsWith("/") ? "*".repeat(Math.min(line.length, 8)) : line}\n`,
    );
  }

  private clearPromptLine(): void {
    this.output.write("\r\u001b[2K");
  }

  /** Print lines; in a terminal, above a prompt that is waiting, which is then drawn again. */
  print(text: string): void {
    if (this.tty && this.prompting) {
      this.clearPromptLine();
      this.output.write(`${text}\n`);
      this.rl.setPrompt(this.currentPrompt);
      this.rl.prompt(true);
      return;
    }
    this.output.write(`${text}\n`);
  }

  close(): void {
    this.ended = true;
    this.rl.close();
  }
}
